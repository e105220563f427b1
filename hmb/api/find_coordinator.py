"""FindCoordinator v0-v2 (0.8.2 GroupCoordinator): every group and transaction is coordinated here.

v1 adds the key type: 0 asks for a group's coordinator, 1 for a
transactional id's; this broker is both (Describe on the group or the
transactional id is required).  Another key type is INVALID_REQUEST.
"""

from __future__ import annotations

from typing import Any

from hmb.api.authz import DENIED, allowed
from hmb.api.context import Reply, RequestContext
from hmb.api.registry import handles
from hmb.security.acl import Operation, ResourceType
from kproto import ApiKey, ErrorCode

KEY_TYPE_GROUP = 0
KEY_TYPE_TRANSACTION = 1


def _error(code: int, message: str | None) -> dict[str, Any]:
    return {
        "throttle_time_ms": 0,
        "error_code": code,
        "error_message": message,
        "node_id": -1,
        "host": "",
        "port": -1,
    }


#: key type -> the resource Describe is checked on (every key type is coordinated by this broker)
KEY_RESOURCES = {KEY_TYPE_GROUP: ResourceType.GROUP, KEY_TYPE_TRANSACTION: ResourceType.TRANSACTIONAL_ID}


def refusal(ctx: RequestContext, key_type: int, key: str) -> dict[str, Any] | None:
    """The answer when this broker does not coordinate ``key`` for this client (None: it does)."""
    resource = KEY_RESOURCES.get(key_type)
    if resource is None:
        return _error(ErrorCode.INVALID_REQUEST, f"unknown coordinator key type {key_type}")
    if not allowed(ctx, Operation.DESCRIBE, resource, key):
        return _error(DENIED[resource], None)
    return None


@handles(ApiKey.FIND_COORDINATOR, versions=(0, 2))
async def handle(ctx: RequestContext) -> Reply:
    key_type = ctx.request.body.key_type if ctx.request.version >= 1 else KEY_TYPE_GROUP
    key = ctx.request.body.key
    refused = refusal(ctx, key_type, key)
    if refused is not None:
        return refused
    adv = ctx.services.advertised(ctx.session.listener)
    return {
        "throttle_time_ms": 0,
        "error_code": ErrorCode.NONE,
        "error_message": None,
        "node_id": ctx.config.node_id,
        "host": adv.host,
        "port": adv.port,
    }
