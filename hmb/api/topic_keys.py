"""Topics named by id (KIP-516) or by name, resolved once per request.

Newer versions name a topic by its 16-byte id where older ones give its name
(Fetch v13+, OffsetCommit and OffsetFetch v10).  A handler resolves the
request's topics here and keeps each topic's *key* (what the request gave,
and what the answer repeats) beside its name in this broker.  Rules: a name
resolves to itself; an id resolves through the log's table of topic ids
(:mod:`hmb.log.topic_ids`), and an id the broker does not know (never made,
or the id of a topic deleted since, even if made again under its name)
resolves to None, which the handler answers UNKNOWN_TOPIC_ID.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from hmb.api.context import RequestContext

TopicKey = str | bytes
"""A topic as a request names it: its name, or its 16-byte id."""


def resolve(
    ctx: RequestContext, topics: Iterable[Any], by_id: bool, name_field: str = "name"
) -> list[tuple[TopicKey, str | None]]:
    """(key, name here or None) for each of ``topics`` (request structs with ``topic_id`` when
    ``by_id``, else with ``name_field``), in their order."""
    if not by_id:
        return [(name := getattr(t, name_field), name) for t in topics]
    known = ctx.logs.topics_by_id
    return [(topic_id := bytes(t.topic_id), known.get(topic_id)) for t in topics]


def key_field(by_id: bool, name_field: str = "name") -> str:
    """The answer's field for a topic's key."""
    return "topic_id" if by_id else name_field
