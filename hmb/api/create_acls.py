"""CreateAcls v0-v3: add ACL bindings (Alter on the cluster needed); one result per creation."""

from __future__ import annotations

from typing import Any

from hmb.api.acl_bodies import NO_AUTHORIZER, binding_of
from hmb.api.authz import cluster_allowed
from hmb.api.context import Reply, RequestContext
from hmb.api.registry import handles
from hmb.security.acl import Operation
from kproto import ApiKey, ErrorCode

VERSIONS = (1, 3)  # v0 is gone in Kafka 4.x


@handles(ApiKey.CREATE_ACLS, versions=VERSIONS)
async def handle(ctx: RequestContext) -> Reply:
    creations = ctx.request.body.creations
    authorizer = ctx.services.authorizer

    def every(code: int, message: str | None) -> Reply:
        return {
            "throttle_time_ms": 0,
            "results": [{"error_code": code, "error_message": message}] * len(creations),
        }

    if authorizer is None:
        return every(ErrorCode.SECURITY_DISABLED, NO_AUTHORIZER)
    if not cluster_allowed(ctx, Operation.ALTER):
        return every(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, None)
    results: list[dict[str, Any]] = []
    valid = []
    for creation in creations:
        binding = binding_of(creation)
        reason = binding.invalid_reason()
        if reason is None:
            valid.append(binding)
            results.append({"error_code": ErrorCode.NONE, "error_message": None})
        else:
            results.append({"error_code": ErrorCode.INVALID_REQUEST, "error_message": reason})
    authorizer.create(valid)
    return {"throttle_time_ms": 0, "results": results}
