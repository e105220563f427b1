"""DeleteAcls v0-v3: remove the bindings each filter selects (Alter on the cluster needed);
each filter's result lists what it removed."""

from __future__ import annotations

from typing import Any

from hmb.api.acl_bodies import NO_AUTHORIZER, filter_of
from hmb.api.authz import cluster_allowed
from hmb.api.context import Reply, RequestContext
from hmb.api.registry import handles
from hmb.security.acl import Operation
from kproto import ApiKey, ErrorCode

VERSIONS = (1, 3)  # v0 is gone in Kafka 4.x


@handles(ApiKey.DELETE_ACLS, versions=VERSIONS)
async def handle(ctx: RequestContext) -> Reply:
    filters = ctx.request.body.filters
    authorizer = ctx.services.authorizer

    def every(code: int, message: str | None) -> Reply:
        result: dict[str, Any] = {"error_code": code, "error_message": message, "matching_acls": []}
        return {"throttle_time_ms": 0, "filter_results": [result] * len(filters)}

    if authorizer is None:
        return every(ErrorCode.SECURITY_DISABLED, NO_AUTHORIZER)
    if not cluster_allowed(ctx, Operation.ALTER):
        return every(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, None)
    results = []
    for body in filters:
        selection = filter_of(body)
        reason = selection.invalid_reason()
        if reason is not None:
            results.append(
                {"error_code": ErrorCode.INVALID_REQUEST, "error_message": reason, "matching_acls": []}
            )
            continue
        removed = authorizer.delete(selection)
        results.append(
            {
                "error_code": ErrorCode.NONE,
                "error_message": None,
                "matching_acls": [
                    {
                        "error_code": ErrorCode.NONE,
                        "error_message": None,
                        "resource_type": acl.resource_type,
                        "resource_name": acl.resource_name,
                        "pattern_type": acl.pattern_type,
                        "principal": acl.principal,
                        "host": acl.host,
                        "operation": acl.operation,
                        "permission_type": acl.permission,
                    }
                    for acl in removed
                ],
            }
        )
    return {"throttle_time_ms": 0, "filter_results": results}
