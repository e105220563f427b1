"""ACL requests and principals the in-process tests share (CreateAcls, DescribeAcls, DeleteAcls,
and the enforcement tests in tests/security)."""

from __future__ import annotations

from typing import Any

from hmb.api.context import Session
from hmb.security.acl import Operation, PatternType, Permission, ResourceType
from hmb.security.principal import user
from kproto import ApiKey, ErrorCode

from .harness import InProcessBroker

AUTHORIZER = "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer"


def as_user(name: str, host: str = "10.0.0.7") -> Session:
    return Session(peer=f"{host}:4000", principal=user(name))


ADMIN = as_user("admin")


def acl(
    rtype: ResourceType,
    name: str,
    principal: str,
    op: Operation,
    permission: Permission = Permission.ALLOW,
    pattern: PatternType = PatternType.LITERAL,
) -> dict[str, Any]:
    return {
        "resource_type": rtype,
        "resource_name": name,
        "resource_pattern_type": pattern,
        "principal": principal,
        "host": "*",
        "operation": op,
        "permission_type": permission,
    }


async def grant(b: InProcessBroker, *acls: dict[str, Any]) -> None:
    resp = await b.request(ApiKey.CREATE_ACLS, 3, {"creations": list(acls)}, session=ADMIN)
    assert [r.error_code for r in resp.results] == [ErrorCode.NONE] * len(acls)


ANY_FILTER: dict[str, Any] = {
    "resource_type_filter": ResourceType.ANY,
    "resource_name_filter": None,
    "pattern_type_filter": PatternType.ANY,
    "principal_filter": None,
    "host_filter": None,
    "operation": Operation.ANY,
    "permission_type": Permission.ANY,
}
