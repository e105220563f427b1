"""DeleteTopics v0-v6: remove topics and their partition logs from disk.

An unknown (or illegal) name is UNKNOWN_TOPIC_OR_PARTITION, as in Kafka.
v4+ are flexible, v5 adds an error message, v6 names topics by name or by
id (KIP-516): an id no topic has is UNKNOWN_TOPIC_ID, and each answer
carries both the name and the id.
``__consumer_offsets`` is refused (INVALID_TOPIC_EXCEPTION): it is internal,
Kafka does not delete it either, and this broker keeps committed offsets in
it.  Deletion is complete when the answer leaves (the files are closed and
removed, see :meth:`hmb.log.manager.LogManager.delete_topic`), so
``timeout_ms`` never expires.

In a cluster the broker that receives the request marks the topic under
``/admin/delete_topics``; the controller removes its znodes and every broker
its partitions when the topic leaves the cluster's view.  The answer waits
(``timeout_ms``) until the topic is gone from the view; REQUEST_TIMED_OUT
when it is not yet (the deletion goes on).
"""

from __future__ import annotations

import logging
from typing import Any

from hmb.api.authz import allowed
from hmb.api.context import Reply, RequestContext
from hmb.api.registry import handles
from hmb.log.topic_ids import ZERO as ZERO_ID
from hmb.security.acl import Operation, ResourceType
from kproto import ApiKey, ErrorCode

log = logging.getLogger(__name__)

INTERNAL_TOPICS = frozenset({"__consumer_offsets"})


async def _delete(ctx: RequestContext, name: str) -> int:
    if not allowed(ctx, Operation.DELETE, ResourceType.TOPIC, name):
        return ErrorCode.TOPIC_AUTHORIZATION_FAILED
    if name in INTERNAL_TOPICS:
        return ErrorCode.INVALID_TOPIC_EXCEPTION
    cluster = ctx.services.cluster
    if cluster is not None:
        if name not in cluster.view.topics:
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        await cluster.delete_topic(name)
        timeout_s = max(ctx.request.body.timeout_ms, 0) / 1000
        gone = await cluster.wait_until(
            lambda v: name not in v.topics and name not in ctx.logs.topics, timeout_s
        )
        return ErrorCode.NONE if gone else ErrorCode.REQUEST_TIMED_OUT
    try:
        await ctx.logs.delete_topic(name)
    except KeyError:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    except OSError as exc:
        log.error("deleting topic %s failed: %s", name, exc)
        return ErrorCode.KAFKA_STORAGE_ERROR
    return ErrorCode.NONE


def _answer(name: str | None, topic_id: bytes, code: int) -> dict[str, Any]:
    message = None if code == ErrorCode.NONE else ErrorCode(code).name
    return {"name": name, "topic_id": topic_id, "error_code": code, "error_message": message}


@handles(ApiKey.DELETE_TOPICS, versions=(0, 6))
async def handle(ctx: RequestContext) -> Reply:
    body = ctx.request.body
    responses: list[dict[str, Any]] = []
    if ctx.request.version < 6:
        for name in body.topic_names:
            topic_id = ctx.logs.topic_ids.get(name, ZERO_ID)
            responses.append(_answer(name, topic_id, await _delete(ctx, name)))
        return {"throttle_time_ms": 0, "responses": responses}
    for topic in body.topics:
        name, topic_id = topic.name, bytes(topic.topic_id)
        if name is None:
            name = ctx.logs.topics_by_id.get(topic_id)
            if name is None:
                responses.append(_answer(None, topic_id, ErrorCode.UNKNOWN_TOPIC_ID))
                continue
        else:
            topic_id = ctx.logs.topic_ids.get(name, ZERO_ID)
        responses.append(_answer(name, topic_id, await _delete(ctx, name)))
    return {"throttle_time_ms": 0, "responses": responses}
