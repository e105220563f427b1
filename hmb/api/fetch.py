"""Fetch v0: record sets from many partitions, long-polling for ``min_bytes``.

The request waits (up to ``max_wait_ms``) until the partitions it reads hold
at least ``min_bytes`` beyond the requested offsets.  Waiting is on the
partitions' append events, never a sleep loop: an append wakes the fetch at
once.  Records leave as file regions for ``os.sendfile``.
"""

from __future__ import annotations

import contextlib
import math

import trio

from hmb.api.context import RawResponse, Reply, RequestContext
from hmb.api.fetch_response import PartitionData, build_fetch_response
from hmb.log.partition import OffsetOutOfRangeError, PartitionLog
from kproto import ApiKey, ErrorCode

API_KEY = ApiKey.FETCH
VERSIONS = (0, 0)


async def wait_any(events: list[trio.Event], deadline: float) -> None:
    """Return when any of ``events`` is set or at ``deadline``."""
    if any(ev.is_set() for ev in events):
        return
    with trio.move_on_at(deadline):
        async with trio.open_nursery() as nursery:

            async def waiter(ev: trio.Event) -> None:
                await ev.wait()
                nursery.cancel_scope.cancel()

            for ev in events:
                nursery.start_soon(waiter, ev)


def _collect(
    ctx: RequestContext, stack: contextlib.ExitStack
) -> tuple[list[tuple[str, list[PartitionData]]], int, bool, list[PartitionLog]]:
    topics = []
    total = 0
    errors = False
    logs: list[PartitionLog] = []
    for topic in ctx.request.body.topics:
        partitions = []
        for p in topic.partitions:
            plog = ctx.broker.logs.get(topic.topic, p.partition)
            if plog is None:
                partitions.append(PartitionData(p.partition, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1, None))
                errors = True
                continue
            logs.append(plog)
            hw = plog.high_watermark
            try:
                region = stack.enter_context(plog.read(p.fetch_offset, p.partition_max_bytes))
            except OffsetOutOfRangeError:
                partitions.append(PartitionData(p.partition, ErrorCode.OFFSET_OUT_OF_RANGE, hw, None))
                errors = True
                continue
            if region is not None:
                total += region.length
            partitions.append(PartitionData(p.partition, ErrorCode.NONE, hw, region))
        topics.append((topic.topic, partitions))
    return topics, total, errors, logs


async def handle(ctx: RequestContext) -> Reply:
    body = ctx.request.body
    deadline = trio.current_time() + max(0, body.max_wait_ms) / 1000
    while True:
        stack = contextlib.ExitStack()
        topics, total, errors, logs = _collect(ctx, stack)
        done = total >= body.min_bytes or errors or not logs or trio.current_time() >= deadline
        if done or ctx.client_gone.is_set():
            break
        events = [plog.appended_event() for plog in logs] + [ctx.client_gone]
        stack.close()
        await wait_any(events, deadline if math.isfinite(deadline) else trio.current_time() + 3600)
    return RawResponse(build_fetch_response(ctx.request.correlation_id, topics), stack)
