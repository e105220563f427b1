"""DeleteTopics v0-v3: remove topics and their partition logs from disk.

An unknown (or illegal) name is UNKNOWN_TOPIC_OR_PARTITION, as in Kafka.
``__consumer_offsets`` is refused (INVALID_TOPIC_EXCEPTION): it is internal,
Kafka does not delete it either, and this broker keeps committed offsets in
it.  Deletion is complete when the answer leaves (the files are closed and
removed, see :meth:`hmb.log.manager.LogManager.delete_topic`), so
``timeout_ms`` never expires.
"""

from __future__ import annotations

import logging
from typing import Any

from hmb.api.authz import allowed
from hmb.api.context import Reply, RequestContext
from hmb.api.registry import handles
from hmb.security.acl import Operation, ResourceType
from kproto import ApiKey, ErrorCode

log = logging.getLogger(__name__)

INTERNAL_TOPICS = frozenset({"__consumer_offsets"})


async def _delete(ctx: RequestContext, name: str) -> int:
    if not allowed(ctx, Operation.DELETE, ResourceType.TOPIC, name):
        return ErrorCode.TOPIC_AUTHORIZATION_FAILED
    if name in INTERNAL_TOPICS:
        return ErrorCode.INVALID_TOPIC_EXCEPTION
    try:
        await ctx.logs.delete_topic(name)
    except KeyError:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    except OSError as exc:
        log.error("deleting topic %s failed: %s", name, exc)
        return ErrorCode.KAFKA_STORAGE_ERROR
    return ErrorCode.NONE


@handles(ApiKey.DELETE_TOPICS, versions=(0, 3))
async def handle(ctx: RequestContext) -> Reply:
    responses: list[dict[str, Any]] = []
    for name in ctx.request.body.topic_names:
        responses.append({"name": name, "error_code": await _delete(ctx, name)})
    return {"throttle_time_ms": 0, "responses": responses}
