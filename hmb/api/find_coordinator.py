"""FindCoordinator v0-v2 (0.8.2 GroupCoordinator): every group is coordinated here.

v1 adds the key type: 0 asks for a group's coordinator (this broker), 1 for
a transaction coordinator, which this broker is not (transactions are out of
scope), so that is COORDINATOR_NOT_AVAILABLE with a message; a transactional
producer then fails at its own timeout instead of believing it has one.
"""

from __future__ import annotations

from typing import Any

from hmb.api.authz import allowed
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


@handles(ApiKey.FIND_COORDINATOR, versions=(0, 2))
async def handle(ctx: RequestContext) -> Reply:
    key_type = ctx.request.body.key_type if ctx.request.version >= 1 else KEY_TYPE_GROUP
    key = ctx.request.body.key
    if key_type == KEY_TYPE_TRANSACTION:
        if not allowed(ctx, Operation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, key):
            return _error(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, None)
        return _error(ErrorCode.COORDINATOR_NOT_AVAILABLE, "this broker has no transaction coordinator")
    if key_type != KEY_TYPE_GROUP:
        return _error(ErrorCode.INVALID_REQUEST, f"unknown coordinator key type {key_type}")
    if not allowed(ctx, Operation.DESCRIBE, ResourceType.GROUP, key):
        return _error(ErrorCode.GROUP_AUTHORIZATION_FAILED, None)
    cluster = ctx.services.cluster
    if cluster is not None:  # the leader of the group's __consumer_offsets partition
        from hmb.api.cluster_metadata import coordinator

        node = coordinator(cluster, key)
        reg = cluster.view.brokers.get(node)
        if reg is None:
            return _error(ErrorCode.COORDINATOR_NOT_AVAILABLE, "the group's offsets partition has no leader")
        ep = reg.endpoint(ctx.session.listener)
        return {
            "throttle_time_ms": 0,
            "error_code": ErrorCode.NONE,
            "error_message": None,
            "node_id": node,
            "host": ep.host,
            "port": ep.port,
        }
    adv = ctx.services.advertised(ctx.session.listener)
    return {
        "throttle_time_ms": 0,
        "error_code": ErrorCode.NONE,
        "error_message": None,
        "node_id": ctx.config.node_id,
        "host": adv.host,
        "port": adv.port,
    }
