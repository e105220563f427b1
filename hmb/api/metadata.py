"""Metadata: this broker as node 0 (its advertised address), topics and partitions.

An empty topic list means every topic (internal ones like
``__consumer_offsets`` only when asked for by name).  An unknown topic is
created when ``auto.create.topics.enable`` is on, as Kafka 0.8 did.
"""

from __future__ import annotations

from typing import Any

from hmb.api.context import Reply, RequestContext
from hmb.log.manager import InvalidTopicError, validate_topic_name
from kproto import ApiKey, ErrorCode

API_KEY = ApiKey.METADATA
VERSIONS = (0, 0)


def _partitions(node: int, count: int) -> list[dict[str, Any]]:
    return [
        {
            "error_code": 0,
            "partition_index": p,
            "leader_id": node,
            "replica_nodes": [node],
            "isr_nodes": [node],
        }
        for p in range(count)
    ]


async def handle(ctx: RequestContext) -> Reply:
    broker = ctx.broker
    cfg = broker.config
    node = cfg.node_id
    requested = [t.name for t in ctx.request.body.topics]
    if not requested:
        requested = sorted(t for t in broker.logs.topics if not t.startswith("__"))
    topics = []
    for name in requested:
        logs = broker.logs.topics.get(name)
        if logs is None:
            try:
                validate_topic_name(name)
            except InvalidTopicError:
                topics.append(
                    {"error_code": ErrorCode.INVALID_TOPIC_EXCEPTION, "name": name, "partitions": []}
                )
                continue
            if not cfg.auto_create_topics:
                topics.append(
                    {"error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "name": name, "partitions": []}
                )
                continue
            logs = broker.logs.create_topic(name, cfg.num_partitions)
        topics.append({"error_code": 0, "name": name, "partitions": _partitions(node, len(logs))})
    adv = broker.advertised()
    return {"brokers": [{"node_id": node, "host": adv.host, "port": adv.port}], "topics": topics}
