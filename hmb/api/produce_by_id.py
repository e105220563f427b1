"""Produce v13+: topics named by id (KIP-516), resolved before the append and repeated in the answer.

Rule: a v13 request names each topic by its 16-byte id; an id this broker
does not know (never made, or the id of a topic deleted since, even if made
again under its name) is UNKNOWN_TOPIC_ID for each of its partitions, and
nothing is written there.  The answer names each topic by the id the
request gave.  The struct fast path (:mod:`kproto.produce_fast`) stops at
v12, so a v13 request is decoded, and its answer encoded, by the grammar:
the same fields as v12's answer, a topic id in place of the name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hmb.api.context import RequestContext
from hmb.api.topic_keys import resolve
from kproto.produce_fast import PartitionResult

FIRST_TOPIC_ID = 13
"""The first Produce version that names topics by id."""


def topic_names(ctx: RequestContext) -> list[str | None]:
    """The request's topics as names here, in their order (None: an unknown id)."""
    body = ctx.request.body
    if ctx.request.version < FIRST_TOPIC_ID:
        return [t.name for t in body.topic_data]
    return [name for _key, name in resolve(ctx, body.topic_data, by_id=True)]


def response_by_id(
    ctx: RequestContext,
    responses: list[tuple[str | None, list[PartitionResult]]],
    log_append_times: Mapping[tuple[str, int], int],
    error_messages: Mapping[tuple[str, int], str],
) -> dict[str, Any]:
    """The v13+ answer for ``responses`` (in the request's topic order), as a body for the grammar."""
    topics = []
    for topic, (name, partitions) in zip(ctx.request.body.topic_data, responses, strict=True):
        answers: list[dict[str, Any]] = [
            {
                "index": index,
                "error_code": code,
                "base_offset": base,
                "log_append_time_ms": log_append_times.get((name, index), -1) if name else -1,
                "log_start_offset": start,
                "record_errors": [],
                "error_message": error_messages.get((name, index)) if name else None,
            }
            for index, code, base, start in partitions
        ]
        topics.append({"topic_id": bytes(topic.topic_id), "partition_responses": answers})
    return {"responses": topics, "throttle_time_ms": 0}
