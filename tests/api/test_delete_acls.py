"""DeleteAcls v1-v3 in process: each filter removes what it matches and reports it.

v1 adds pattern types, v2 is flexible.  Only a principal with Alter on the
cluster may delete; a refused request removes nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hmb.security.acl import Operation, ResourceType
from kproto import ApiKey, ErrorCode

from .acls import ADMIN, ANY_FILTER, AUTHORIZER, acl, as_user, grant
from .harness import InProcessBroker


@pytest.mark.parametrize("version", [1, 2, 3])
async def test_delete_by_filter(tmp_path: Path, version: int) -> None:
    b = InProcessBroker(tmp_path / "data", AUTHORIZER, "super.users=User:admin")
    await grant(
        b,
        acl(ResourceType.TOPIC, "a", "User:alice", Operation.READ),
        acl(ResourceType.TOPIC, "b", "User:bob", Operation.READ),
    )
    only_bob = {**ANY_FILTER, "principal_filter": "User:bob"}
    refused = await b.request(ApiKey.DELETE_ACLS, version, {"filters": [only_bob]}, session=as_user("alice"))
    assert refused.filter_results[0].error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    still = await b.request(ApiKey.DESCRIBE_ACLS, version, ANY_FILTER, session=ADMIN)
    assert len(still.resources) == 2  # nothing removed
    done = await b.request(ApiKey.DELETE_ACLS, version, {"filters": [only_bob]}, session=ADMIN)
    result = done.filter_results[0]
    assert result.error_code == ErrorCode.NONE
    assert [(m.resource_name, m.principal) for m in result.matching_acls] == [("b", "User:bob")]
    left = await b.request(ApiKey.DESCRIBE_ACLS, version, ANY_FILTER, session=ADMIN)
    assert [r.resource_name for r in left.resources] == ["a"]
