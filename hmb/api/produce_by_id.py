"""Produce v13+: topics named by id (KIP-516), resolved before the append and repeated in the answer.

Rule: a v13 request names each topic by its 16-byte id; an id this broker
does not know (never made, or the id of a topic deleted since, even if made
again under its name) is UNKNOWN_TOPIC_ID for each of its partitions, and
nothing is written there.  The answer names each topic by the id the
request gave (its *key*; a name before v13), through the struct fast path
of :mod:`kproto.produce_fast`, as every other version.
"""

from __future__ import annotations

from hmb.api.context import RequestContext
from hmb.api.topic_keys import resolve
from kproto.produce_fast import FIRST_TOPIC_ID


def topic_names(ctx: RequestContext) -> list[str | None]:
    """The request's topics as names here, in their order (None: an unknown id)."""
    body = ctx.request.body
    if ctx.request.version < FIRST_TOPIC_ID:
        return [t.name for t in body.topic_data]
    return [name for _key, name in resolve(ctx, body.topic_data, by_id=True)]


def topic_keys(ctx: RequestContext, names: list[str | None]) -> list[str | bytes]:
    """Each topic as the answer names it: ``names`` before v13, the request's ids from v13."""
    if ctx.request.version < FIRST_TOPIC_ID:
        return names  # type: ignore[return-value]  # before v13 every topic has its name
    return [bytes(t.topic_id) for t in ctx.request.body.topic_data]
