"""FindCoordinator v0-6 (0.8.2 GroupCoordinator): who coordinates a group or a transaction.

v1 adds the key type: 0 asks for a group's coordinator, 1 for a
transactional id's; a broker alone is both (Describe on the group or the
transactional id is required).  In a cluster a group's coordinator is the
leader of its ``__consumer_offsets`` partition, a transactional id's the
leader of its ``__transaction_state`` partition (the first FindCoordinator
of each kind makes that topic, answered COORDINATOR_NOT_AVAILABLE
meanwhile, as Kafka does).  v3+ flexible.  v4+ (KIP-699) ask for a
batch of keys of one type and are answered per key.  v5 only allows TRANSACTION_ABORTABLE among the answers.
v6 (KIP-932) adds key type 2, a share group's coordinator: share groups are
not served, so such a key is answered INVALID_REQUEST, as an unknown key
type is.  What a key type is answered is decided in one place,
:func:`coordinator_for`; the handler only lays the answers out per version.
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
BATCHED_VERSION = 4
"""From this version the keys come as ``coordinator_keys`` and each is answered on its own."""


def _error(code: int, message: str | None) -> dict[str, Any]:
    return {"error_code": code, "error_message": message, "node_id": -1, "host": "", "port": -1}


#: key type -> the resource Describe is checked on (this broker coordinates both)
KEY_RESOURCES = {KEY_TYPE_GROUP: ResourceType.GROUP, KEY_TYPE_TRANSACTION: ResourceType.TRANSACTIONAL_ID}


async def coordinator_for(ctx: RequestContext, key_type: int, key: str) -> dict[str, Any]:
    """Who coordinates ``key`` of ``key_type``: error code and message, node id, host and port."""
    resource = KEY_RESOURCES.get(key_type)
    if resource is None:
        return _error(ErrorCode.INVALID_REQUEST, f"unknown coordinator key type {key_type}")
    if not allowed(ctx, Operation.DESCRIBE, resource, key):
        return _error(DENIED[resource], None)
    cluster = ctx.services.cluster
    if cluster is not None:
        from hmb.api.cluster_metadata import coordinator, create_offsets_topic, create_txn_state_topic
        from hmb.cluster.layout import OFFSETS_TOPIC, TXN_STATE_TOPIC

        txn = key_type == KEY_TYPE_TRANSACTION
        topic = TXN_STATE_TOPIC if txn else OFFSETS_TOPIC
        if topic not in cluster.view.topics:  # its first use makes it, as in Kafka
            await (create_txn_state_topic if txn else create_offsets_topic)(cluster)
            return _error(ErrorCode.COORDINATOR_NOT_AVAILABLE, f"{topic} is being created")
        node = coordinator(cluster, key, topic)  # the leader of the key's partition of the topic
        reg = cluster.view.brokers.get(node)
        if reg is None:
            return _error(ErrorCode.COORDINATOR_NOT_AVAILABLE, f"its partition of {topic} has no leader")
        ep = reg.endpoint(ctx.session.listener)
        return {
            "error_code": ErrorCode.NONE,
            "error_message": None,
            "node_id": node,
            "host": ep.host,
            "port": ep.port,
        }
    adv = ctx.services.advertised(ctx.session.listener)
    return {
        "error_code": ErrorCode.NONE,
        "error_message": None,
        "node_id": ctx.config.node_id,
        "host": adv.host,
        "port": adv.port,
    }


@handles(ApiKey.FIND_COORDINATOR, versions=(0, 6))
async def handle(ctx: RequestContext) -> Reply:
    body = ctx.request.body
    key_type = body.key_type if ctx.request.version >= 1 else KEY_TYPE_GROUP
    if ctx.request.version < BATCHED_VERSION:
        return {"throttle_time_ms": 0, **(await coordinator_for(ctx, key_type, body.key))}
    if not body.coordinator_keys:
        return {"throttle_time_ms": 0, "coordinators": []}
    return {
        "throttle_time_ms": 0,
        "coordinators": [
            {"key": key, **(await coordinator_for(ctx, key_type, key))} for key in body.coordinator_keys
        ],
    }
