"""DescribeAcls v0-v3: the bindings a filter selects (Describe on the cluster needed),
grouped by resource as Kafka answers them."""

from __future__ import annotations

from typing import Any

from hmb.api.acl_bodies import NO_AUTHORIZER, filter_of
from hmb.api.authz import cluster_allowed
from hmb.api.context import Reply, RequestContext
from hmb.api.registry import handles
from hmb.security.acl import Operation
from kproto import ApiKey, ErrorCode

VERSIONS = (1, 3)  # v0 is gone in Kafka 4.x


@handles(ApiKey.DESCRIBE_ACLS, versions=VERSIONS)
async def handle(ctx: RequestContext) -> Reply:
    authorizer = ctx.services.authorizer

    def error(code: int, message: str | None) -> Reply:
        return {"throttle_time_ms": 0, "error_code": code, "error_message": message, "resources": []}

    if authorizer is None:
        return error(ErrorCode.SECURITY_DISABLED, NO_AUTHORIZER)
    if not cluster_allowed(ctx, Operation.DESCRIBE):
        return error(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, None)
    selection = filter_of(ctx.request.body)
    reason = selection.invalid_reason()
    if reason is not None:
        return error(ErrorCode.INVALID_REQUEST, reason)
    resources: dict[tuple[int, str, int], list[dict[str, Any]]] = {}
    for acl in authorizer.acls(selection):
        key = (acl.resource_type, acl.resource_name, acl.pattern_type)
        resources.setdefault(key, []).append(
            {
                "principal": acl.principal,
                "host": acl.host,
                "operation": acl.operation,
                "permission_type": acl.permission,
            }
        )
    return {
        "throttle_time_ms": 0,
        "error_code": ErrorCode.NONE,
        "error_message": None,
        "resources": [
            {"resource_type": rtype, "resource_name": name, "pattern_type": pattern, "acls": acls}
            for (rtype, name, pattern), acls in resources.items()
        ],
    }
