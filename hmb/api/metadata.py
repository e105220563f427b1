"""Metadata v0-v13: this broker as node 0 (its advertised address), topics and partitions.

Which topics: in v0 an empty list means every topic except internal ones
(Kafka 0.8 had none, and legacy clients would try to read them); from v1 a
null list means every topic, ``__consumer_offsets`` included and marked
internal, as Kafka answers, while an empty list means none.  An unknown
topic is created when ``auto.create.topics.enable`` is on and, from v4, the
client allows it too (``allow_auto_topic_creation``).

This broker is the controller (v1+), has no rack (null), keeps its cluster
id in ``meta.properties`` so it survives restarts (v2+), has no offline
replicas (v5+), answers leader epoch -1 (v7+: an epoch that moved would send
clients to OffsetForLeaderEpoch; docs/client-quirks.md, "Leader epochs") and,
when the client asks (v8+), the operations the connection may do to each
topic and to the cluster as KIP-430's bit fields, from the authoriser (every
operation without one); INT32_MIN when not asked.  v9+ are flexible; v10+
carry each topic's id (KIP-516) and accept a topic asked by id (name null):
an id no topic has is UNKNOWN_TOPIC_ID, its name null (v12+, "" before); v11 drops the
cluster's operations; v13 adds a top-level error code (always NONE here).
"""

from __future__ import annotations

from typing import Any

from hmb.api.authz import OPERATIONS_NOT_ASKED, authorized_operations, may_create_topic, topics_allowed
from hmb.api.context import Reply, RequestContext
from hmb.api.registry import handles
from hmb.log.leader_epochs import LEADER_EPOCH
from hmb.log.manager import InvalidTopicError, validate_topic_name
from hmb.log.topic_ids import ZERO as ZERO_ID
from hmb.security.acl import CLUSTER_NAME, Operation, ResourceType
from kproto import ApiKey, ErrorCode

INTERNAL_TOPICS = frozenset(
    {"__consumer_offsets", "__transaction_state"}
)  # Kafka's, where hmb keeps them too


def _partitions(node: int, count: int) -> list[dict[str, Any]]:
    return [
        {
            "error_code": 0,
            "partition_index": p,
            "leader_id": node,
            "leader_epoch": LEADER_EPOCH,
            "replica_nodes": [node],
            "isr_nodes": [node],
            "offline_replicas": [],
        }
        for p in range(count)
    ]


def _topic(
    name: str | None,
    error_code: int,
    partitions: list[dict[str, Any]],
    operations: int = OPERATIONS_NOT_ASKED,
    topic_id: bytes = ZERO_ID,
) -> dict[str, Any]:
    return {
        "error_code": error_code,
        "name": name,
        "topic_id": topic_id,
        "is_internal": name in INTERNAL_TOPICS,
        "partitions": partitions,
        "topic_authorized_operations": operations,
    }


async def _cluster_topic(ctx: RequestContext, name: str, auto_create: bool) -> dict[str, Any]:
    """One topic as the cluster has it: placed by the controller, created through ZooKeeper."""
    from hmb.api import cluster_metadata  # kazoo is imported by brokers in a cluster only

    cluster = ctx.services.cluster
    assert cluster is not None
    view = cluster.view
    if name in view.topics and name not in view.deleting:
        operations = OPERATIONS_NOT_ASKED
        if ctx.request.body.get("include_topic_authorized_operations"):
            operations = authorized_operations(ctx, ResourceType.TOPIC, name)
        parts = cluster_metadata.partitions(view, name, None if cluster.view_trusted() else cluster.broker_id)
        return _topic(name, ErrorCode.NONE, parts, operations, cluster_metadata.topic_id(view, name))
    try:
        validate_topic_name(name)
    except InvalidTopicError:
        return _topic(name, ErrorCode.INVALID_TOPIC_EXCEPTION, [])
    if not auto_create:
        return _topic(name, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, [])
    if not may_create_topic(ctx, name):
        return _topic(name, ErrorCode.TOPIC_AUTHORIZATION_FAILED, [])
    if name not in view.deleting:
        await cluster_metadata.auto_create(cluster, name, ctx.config.num_partitions)
    return _topic(name, ErrorCode.LEADER_NOT_AVAILABLE, [])


@handles(ApiKey.METADATA, versions=(0, 13))
async def handle(ctx: RequestContext) -> Reply:
    services = ctx.services
    cfg = services.config
    node = cfg.node_id
    body = ctx.request.body
    version = ctx.request.version
    auto_create = cfg.auto_create_topics and (version < 4 or body.allow_auto_topic_creation)
    unknown_ids: list[bytes] = []
    cluster = services.cluster  # in a cluster the topics are the cluster's (hmb.api.cluster_metadata)
    known = services.logs.topics if cluster is None else cluster.view.topics
    if body.topics is None:  # v1+: all topics
        requested = sorted(known)
    elif not body.topics and version == 0:
        requested = sorted(t for t in known if not t.startswith("__"))
    else:
        requested = []
        for t in body.topics:
            name = t.name
            topic_id = t.get("topic_id", ZERO_ID)
            if name is None:  # v10+: asked by id
                name = services.logs.topics_by_id.get(bytes(topic_id))
                if name is None:
                    unknown_ids.append(bytes(topic_id))
                    continue
            requested.append(name)
    describable = topics_allowed(ctx, Operation.DESCRIBE, requested)
    if body.topics is None or (not body.topics and version == 0):
        requested = [t for t in requested if t in describable]  # the others are not shown at all
    no_name = None if version >= 12 else ""  # a name may be null from v12 on
    topics = [_topic(no_name, ErrorCode.UNKNOWN_TOPIC_ID, [], topic_id=i) for i in unknown_ids]
    for name in requested:
        if name not in describable:
            topics.append(_topic(name, ErrorCode.TOPIC_AUTHORIZATION_FAILED, []))
            continue
        if cluster is not None:
            topics.append(await _cluster_topic(ctx, name, auto_create))
            continue
        logs = services.logs.topics.get(name)
        if logs is None:
            try:
                validate_topic_name(name)
            except InvalidTopicError:
                topics.append(_topic(name, ErrorCode.INVALID_TOPIC_EXCEPTION, []))
                continue
            if auto_create and not may_create_topic(ctx, name):
                topics.append(_topic(name, ErrorCode.TOPIC_AUTHORIZATION_FAILED, []))
                continue
            if not auto_create:
                topics.append(_topic(name, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, []))
                continue
            if name in services.logs.deleting or name in services.logs.creating:
                # not yet: the client retries, as Kafka answers while a topic is created
                topics.append(_topic(name, ErrorCode.LEADER_NOT_AVAILABLE, []))
                continue
            logs = services.logs.create_topic(name, cfg.num_partitions)
        operations = OPERATIONS_NOT_ASKED
        if body.get("include_topic_authorized_operations"):
            operations = authorized_operations(ctx, ResourceType.TOPIC, name)
        topic_id = services.logs.topic_ids.get(name, ZERO_ID)
        topics.append(_topic(name, ErrorCode.NONE, _partitions(node, len(logs)), operations, topic_id))
    adv = services.advertised(ctx.session.listener)
    brokers = [{"node_id": node, "host": adv.host, "port": adv.port, "rack": None}]
    controller = node
    if cluster is not None:
        from hmb.api.cluster_metadata import brokers as cluster_brokers

        brokers, controller = cluster_brokers(ctx, cluster.view), cluster.view.controller
    return {
        "throttle_time_ms": 0,
        "brokers": brokers,
        "cluster_id": services.logs.cluster_id,
        "controller_id": controller,
        "topics": topics,
        "cluster_authorized_operations": authorized_operations(ctx, ResourceType.CLUSTER, CLUSTER_NAME)
        if body.get("include_cluster_authorized_operations")
        else OPERATIONS_NOT_ASKED,
        "error_code": ErrorCode.NONE,
    }
