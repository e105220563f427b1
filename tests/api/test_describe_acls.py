"""DescribeAcls v1-v3 in process: filters by resource, pattern, principal, operation and permission.

v1 adds pattern types, v2 is flexible.  Only a principal with Describe on
the cluster may list ACLs; others get CLUSTER_AUTHORIZATION_FAILED and see nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hmb.security.acl import Operation, PatternType, Permission, ResourceType
from kproto import ApiKey, ErrorCode

from .acls import ADMIN, ANY_FILTER, AUTHORIZER, acl, as_user, grant
from .harness import InProcessBroker


@pytest.mark.parametrize("version", [1, 2, 3])
async def test_filters(tmp_path: Path, version: int) -> None:
    b = InProcessBroker(tmp_path / "data", AUTHORIZER, "super.users=User:admin")
    await grant(
        b,
        acl(ResourceType.TOPIC, "orders", "User:alice", Operation.READ),
        acl(ResourceType.TOPIC, "pay", "User:bob", Operation.WRITE, pattern=PatternType.PREFIXED),
        acl(ResourceType.GROUP, "g", "User:alice", Operation.READ, Permission.DENY),
    )

    async def names(**only: object) -> list[tuple[str, list[str]]]:
        got = await b.request(ApiKey.DESCRIBE_ACLS, version, {**ANY_FILTER, **only}, session=ADMIN)
        assert got.error_code == ErrorCode.NONE
        return sorted((r.resource_name, sorted(a.principal for a in r.acls)) for r in got.resources)

    assert await names() == [("g", ["User:alice"]), ("orders", ["User:alice"]), ("pay", ["User:bob"])]
    assert await names(resource_type_filter=ResourceType.TOPIC) == [
        ("orders", ["User:alice"]),
        ("pay", ["User:bob"]),
    ]
    assert await names(principal_filter="User:bob") == [("pay", ["User:bob"])]
    assert await names(permission_type=Permission.DENY) == [("g", ["User:alice"])]
    assert await names(pattern_type_filter=PatternType.PREFIXED) == [("pay", ["User:bob"])]
    # MATCH: the ACLs that apply to a topic named "payments" (the prefixed one)
    assert await names(
        resource_type_filter=ResourceType.TOPIC,
        resource_name_filter="payments",
        pattern_type_filter=PatternType.MATCH,
    ) == [("pay", ["User:bob"])]
    refused = await b.request(ApiKey.DESCRIBE_ACLS, version, ANY_FILTER, session=as_user("alice"))
    assert refused.error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED and list(refused.resources) == []
