"""CreateAcls v1-v3 in process (v0 is gone in Kafka 4.x; v2 is flexible, v1 added pattern types).

Only a principal with Alter on the cluster may create ACLs (CLUSTER_AUTHORIZATION_FAILED
otherwise, nothing stored); a malformed binding is INVALID_REQUEST for that binding alone;
ACLs survive a restart; without an authoriser the request is SECURITY_DISABLED.
"""

from __future__ import annotations

from pathlib import Path

from hmb.security.acl import Operation, ResourceType
from kproto import ApiKey, ErrorCode

from .acls import ADMIN, ANY_FILTER, AUTHORIZER, acl, as_user
from .harness import InProcessBroker


def secured(tmp_path: Path) -> InProcessBroker:
    return InProcessBroker(tmp_path / "data", AUTHORIZER, "super.users=User:admin")


async def test_acl_requests_need_cluster_rights_and_persist(tmp_path: Path) -> None:
    b = secured(tmp_path)
    rule = acl(ResourceType.TOPIC, "t", "User:alice", Operation.READ)
    denied = await b.request(ApiKey.CREATE_ACLS, 3, {"creations": [rule]}, session=as_user("alice"))
    assert denied.results[0].error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    bad = {**rule, "operation": Operation.ANY}
    mixed = await b.request(ApiKey.CREATE_ACLS, 3, {"creations": [rule, bad]}, session=ADMIN)
    assert [r.error_code for r in mixed.results] == [ErrorCode.NONE, ErrorCode.INVALID_REQUEST]
    b.restart()  # persisted
    any_filter = ANY_FILTER
    for version in (1, 2, 3):
        described = await b.request(ApiKey.DESCRIBE_ACLS, version, any_filter, session=ADMIN)
        assert [(r.resource_name, [a.principal for a in r.acls]) for r in described.resources] == [
            ("t", ["User:alice"])
        ]
    removed = await b.request(ApiKey.DELETE_ACLS, 3, {"filters": [any_filter]}, session=ADMIN)
    assert [m.resource_name for m in removed.filter_results[0].matching_acls] == ["t"]
    after = await b.request(ApiKey.DESCRIBE_ACLS, 3, any_filter, session=ADMIN)
    assert after.resources == []


async def test_acl_requests_without_an_authoriser(tmp_path: Path) -> None:
    b = InProcessBroker(tmp_path / "data")
    rule = acl(ResourceType.TOPIC, "t", "User:alice", Operation.READ)
    resp = await b.request(ApiKey.CREATE_ACLS, 1, {"creations": [rule]})
    assert resp.results[0].error_code == ErrorCode.SECURITY_DISABLED
