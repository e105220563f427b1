"""DescribeUserScramCredentials v0: which users have SCRAM credentials, with which iterations.

Kafka's rules: Describe on the cluster is needed; no users (null or empty)
means every user with a credential; a named user without one is
RESOURCE_NOT_FOUND, a user named twice DUPLICATE_RESOURCE.  Salts and keys
never leave the broker.
"""

from __future__ import annotations

from hmb.api.authz import cluster_allowed
from hmb.api.context import Reply, RequestContext
from hmb.api.registry import handles
from hmb.security.acl import Operation
from hmb.security.credentials import MECHANISM_IDS
from kproto import ApiKey, ErrorCode

VERSIONS = (0, 0)


@handles(ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, versions=VERSIONS)
async def handle(ctx: RequestContext) -> Reply:
    store = ctx.services.credentials
    if not cluster_allowed(ctx, Operation.DESCRIBE) or store is None:
        return {
            "throttle_time_ms": 0,
            "error_code": ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
            "error_message": None,
            "results": [],
        }
    users = store.users()
    asked = [u.name for u in ctx.request.body.users or []] or list(users)
    results = []
    for name in dict.fromkeys(asked):
        error, message = ErrorCode.NONE, None
        if asked.count(name) > 1:
            error, message = ErrorCode.DUPLICATE_RESOURCE, f"user {name} is named more than once"
        elif name not in users:
            error, message = (
                ErrorCode.RESOURCE_NOT_FOUND,
                "Attempt to describe a user credential that does not exist",
            )
        infos = (
            []
            if error
            else [
                {"mechanism": MECHANISM_IDS[m], "iterations": c.iterations}
                for m, c in sorted(users[name].items())
            ]
        )
        results.append(
            {"user": name, "error_code": error, "error_message": message, "credential_infos": infos}
        )
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "error_message": None, "results": results}
