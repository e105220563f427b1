"""Fetch v0-v18: record sets from many partitions, long-polling for ``min_bytes``.

The request waits (up to ``max_wait_ms``) until the partitions it reads hold
at least ``min_bytes`` beyond the requested offsets.  It waits on one event
that every partition it reads sets at its next append, never a sleep loop
and never a task per partition: an append wakes the fetch at once.
Records leave as file regions for ``os.sendfile``.

What the versions change, and how this broker answers:

* v3+ ``max_bytes`` bounds the whole response.  As in Kafka (KIP-74), the
  first partition that has data gets at least its whole first entry even if
  it is larger than both limits, so a consumer never gets stuck; a later
  partition whose first entry the limit would cut gets no records (clients
  stop at an answer with bytes but no complete record).  v0-v2 keep the
  hard per-partition limit (their clients grow their fetch size).
* v4+ ``last_stable_offset`` is the partition's LSO (the first offset of
  its earliest open transaction, else the high watermark) at every
  isolation level.  ``isolation_level`` 1 (read_committed) returns records
  only below the LSO and lists the aborted transactions that overlap them
  (producer id, first offset; bounded, as Kafka's, by an offset a little
  past the records returned), whose records the consumer drops;
  0 (read_uncommitted) returns everything up to the high watermark with an
  empty list (never null: librdkafka reads the list whatever it asked).
* v7+ incremental fetch sessions (:mod:`hmb.api.fetch_sessions`): the
  partitions read are the session's, and an incremental answer lists only
  those that changed.
* v9+ each partition's ``current_leader_epoch`` is checked
  (:mod:`hmb.api.leader_epoch`): FENCED_LEADER_EPOCH or UNKNOWN_LEADER_EPOCH.
* v11 preferred read replica -1: read from the leader (us).
* v12 flexible.  A partition's ``last_fetched_epoch`` (when not -1) is
  checked against the log's leader epochs as Kafka does: when that epoch
  ends here before ``fetch_offset``, or a newer one began in its place, the
  answer has no records and the tagged ``diverging_epoch`` (the epoch and
  its end offset here) for the client to truncate to.  ``current_leader``
  and ``snapshot_id`` stay at their defaults, left out: a single broker
  leads every partition it has and keeps no Raft snapshots.
* v13 names topics by id (:mod:`hmb.log.topic_ids`); an id the broker does
  not know is UNKNOWN_TOPIC_ID for each of its partitions (so a topic
  deleted and made again under its name is not read through its old id).
* v14 (KIP-405, tiered storage) and v15 (KIP-903: a follower's
  ``replica_state`` tagged instead of ``replica_id``) change nothing for a
  consumer, which sends replica id -1; v16 adds the tagged
  ``node_endpoints`` that come with a ``current_leader``, left out as it
  is; v17's ``replica_directory_id`` (KIP-853) is a follower's.
* v18 adds the tagged ``high_watermark`` a follower reports (KIP-1166);
  a consumer leaves it out and is answered as at v17.
* A follower's fetch (``replica_id`` >= 0, or v15+'s ``replica_state``) in a
  cluster reads up to the log end, not the high watermark, and tells the
  leader how far the follower's copy goes (:mod:`hmb.api.replica_fetch`).
* v0-v3 clients predate message format v2 and read MessageSets only:
  RecordBatches (magic 2) in the range are down-converted to magic 0 (v0-v1)
  or 1 (v2-v3) messages.  Whether a range needs it comes from what the log
  knows of the region (:meth:`hmb.log.region.FileRegion.max_magic`), else
  from the range's own entry headers; a range that needs no conversion
  stays a zero-copy region.

The response is framed by :mod:`kproto.fetch_fast`; a refusal of the log
gets its code from :mod:`hmb.api.errors`.
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import Callable, Sequence
from typing import Any

import trio

from hmb.api import fetch_sessions
from hmb.api.authz import topics_allowed
from hmb.api.context import RawResponse, Reply, RequestContext
from hmb.api.errors import error_code
from hmb.api.leader_epoch import epoch_error
from hmb.api.leadership import misdirected
from hmb.api.registry import handles
from hmb.api.replica_fetch import replica_of
from hmb.api.topic_keys import resolve
from hmb.log.errors import OffsetOutOfRangeError
from hmb.log.partition import PartitionLog
from hmb.log.reading import pin_region, release_all
from hmb.log.region import FileRegion
from hmb.security.acl import Operation
from kproto import ApiKey, CorruptRecordError, ErrorCode
from kproto.fetch_fast import FIRST_TOPIC_ID, PartitionData, build_fetch_response
from kproto.records import downconvert
from kproto.records.entry import LOG_OVERHEAD, entry_size, last_offset, max_magic

log = logging.getLogger(__name__)

_NO_LIMIT = 2**31 - 1
READ_COMMITTED = 1

Partitions = list[PartitionData[FileRegion]]


async def wait_any(events: list[trio.Event], deadline: float) -> None:
    """Return when any of ``events`` is set or at ``deadline`` (a task per event: a few only)."""
    if any(ev.is_set() for ev in events):
        return
    with trio.move_on_at(deadline):
        async with trio.open_nursery() as nursery:

            async def waiter(ev: trio.Event) -> None:
                await ev.wait()
                nursery.cancel_scope.cancel()

            for ev in events:
                nursery.start_soon(waiter, ev)


def _diverging(plog: PartitionLog, last_fetched_epoch: int, fetch_offset: int) -> tuple[int, int] | None:
    """Where the log parted from a reader that last read ``last_fetched_epoch`` (v12+), or None."""
    if last_fetched_epoch < 0:
        return None
    epoch, end_offset = plog.end_offset_for_epoch(last_fetched_epoch)
    if end_offset < 0:  # an epoch newer than the log knows: nothing to say
        return None
    if epoch < last_fetched_epoch or end_offset < fetch_offset:
        return epoch, end_offset
    return None


def _first_entry_cut(region: FileRegion) -> bool:
    """Does ``region`` (not the response's first) end inside its first entry?  A client
    that finds no complete record in a non-empty answer stops with an error."""
    return 0 < region.length < region.segment.entry_size(region.position)


def _collect(
    ctx: RequestContext, stack: contextlib.ExitStack, requested: Sequence[Any]
) -> tuple[list[tuple[str | bytes, Partitions]], int, bool, list[PartitionLog]]:
    """Read the ``requested`` topics (the request's, or its fetch session's)."""
    body = ctx.request.body
    version = ctx.request.version
    limit = body.max_bytes if version >= 3 else _NO_LIMIT
    min_one = version >= 3
    committed = version >= 4 and body.isolation_level == READ_COMMITTED
    follower = replica_of(ctx)
    topics = []
    total = 0
    errors = False
    logs: list[PartitionLog] = []
    pinned: list[FileRegion] = []  # let go of together, once the answer is sent
    stack.callback(release_all, pinned)
    named = resolve(ctx, requested, version >= FIRST_TOPIC_ID, "topic")
    readable = None
    if ctx.services.authorizer is not None:
        readable = topics_allowed(ctx, Operation.READ, (name for _, name in named if name is not None))
    for topic, (key, name) in zip(requested, named, strict=True):
        partitions: Partitions = []
        for p in topic.partitions:
            if name is None:
                partitions.append(PartitionData(p.partition, ErrorCode.UNKNOWN_TOPIC_ID, -1, None))
                errors = True
                continue
            if readable is not None and name not in readable:
                partitions.append(PartitionData(p.partition, ErrorCode.TOPIC_AUTHORIZATION_FAILED, -1, None))
                errors = True
                continue
            if misdirected(ctx, name, p.partition):
                partitions.append(PartitionData(p.partition, ErrorCode.NOT_LEADER_OR_FOLLOWER, -1, None))
                errors = True
                continue
            plog = ctx.logs.get(name, p.partition)
            if plog is None:
                partitions.append(PartitionData(p.partition, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1, None))
                errors = True
                continue
            if (
                refused := epoch_error(ctx, name, p.partition, getattr(p, "current_leader_epoch", -1))
            ) is not None:
                partitions.append(PartitionData(p.partition, refused, -1, None))
                errors = True
                continue
            logs.append(plog)
            diverging = _diverging(plog, getattr(p, "last_fetched_epoch", -1), p.fetch_offset)
            if follower is not None and diverging is None:
                follower.fetched(name, p.partition, p.fetch_offset)  # may move the high watermark
            hw = plog.high_watermark
            lso = plog.last_stable_offset
            start = plog.log_start_offset
            if diverging is not None:
                partitions.append(
                    PartitionData(p.partition, ErrorCode.NONE, hw, None, lso, start, None, diverging)
                )
                errors = True  # answered at once, as an error is: the client must truncate first
                continue
            try:
                region = pin_region(
                    plog,
                    p.fetch_offset,
                    min(p.partition_max_bytes, limit),
                    min_one=min_one,
                    end_offset=lso if committed else None,
                    replica=follower is not None,
                )
            except OffsetOutOfRangeError as exc:
                code = error_code(exc, ApiKey.FETCH, version)
                partitions.append(PartitionData(p.partition, code, hw, None, lso, start))
                errors = True
                continue
            if region is not None:
                pinned.append(region)
            if region is not None and not min_one and version >= 3 and _first_entry_cut(region):
                region = None  # Kafka answers v3+ so: the client reads the entry whole next time
            aborted = None
            if region is not None and region.length:
                total += region.length
                limit = max(0, limit - region.length)
                min_one = False
                if committed:
                    aborted = plog.aborted_transactions(p.fetch_offset, lso, within=region)
            partitions.append(PartitionData(p.partition, ErrorCode.NONE, hw, region, lso, start, aborted))
        topics.append((key, partitions))
    return topics, total, errors, logs


def _converted(region: FileRegion, to_magic: int) -> bytes | None:
    """``region`` as magic ``to_magic`` messages, or None when it needs no conversion.

    Runs in a worker thread (decompression).  When the range holds only the
    beginning of a RecordBatch (a v0-v2 size limit cut it), the whole batch
    is converted instead: converting nothing would leave the client stuck.
    """
    data = region.read()
    if max_magic(data) <= to_magic:
        return None
    out = downconvert(data, to_magic)
    if not out and len(data) >= 12:
        whole = region.whole_entry()
        if len(whole) > len(data):
            out = downconvert(whole, to_magic)
    return out


def _after(data: bytes, offset: int) -> int:
    """The offset after the last complete entry of ``data`` (``offset`` when there is none)."""
    pos = 0
    while len(data) - pos >= LOG_OVERHEAD and pos + entry_size(data, pos) <= len(data):
        offset = max(offset, last_offset(data, pos) + 1)
        pos += entry_size(data, pos)
    return offset


def _converted_past(plog: PartitionLog | None, data: bytes, to_magic: int, max_bytes: int) -> bytes:
    """What a legacy reader gets when a region converts to nothing: the batches it held
    have no record left (a batch a cleaning emptied, kept for its producer's state), so
    the conversion reads on after them until some record converts, as a consumer of the
    old formats cannot be told to skip offsets otherwise."""
    offset = _after(data, 0)
    for _ in range(64):  # bounded: each step passes at least one entry
        if plog is None or offset >= plog.high_watermark:
            return b""
        with plog.read(offset, max_bytes, min_one=True) as region:
            if region is None:
                return b""
            data = region.read()
        out = downconvert(data, to_magic)
        if out:
            return out
        offset = _after(data, offset)
    return b""


async def _downconvert_all(
    topics: list[tuple[str | bytes, Partitions]],
    version: int,
    logs: Callable[[str, int], PartitionLog | None],
) -> None:
    """Replace, in place, each region newer than what Fetch ``version`` reads by converted bytes
    (v0-v3 only: their topics are names)."""
    to_magic = 0 if version <= 1 else 1
    for name, partitions in topics:
        for i, pd in enumerate(partitions):
            region = pd.records
            if not isinstance(region, FileRegion) or not region.length:
                continue
            known = region.max_magic()
            if known is not None and known <= to_magic:
                continue  # the zero-copy path
            try:
                out = await trio.to_thread.run_sync(_converted, region, to_magic)
            except CorruptRecordError as exc:  # the log's own bytes: the broker's fault, not the client's
                log.error("cannot down-convert stored records at %s: %s", region, exc)
                code = error_code(exc, ApiKey.FETCH, version)
                partitions[i] = PartitionData(pd.partition, code, pd.high_watermark, None)
                continue
            if out == b"":
                plog = logs(str(name), pd.partition)
                out = _converted_past(plog, region.read(), to_magic, max(region.length, 1))
            if out is not None:
                partitions[i] = pd._replace(records=out)


@handles(ApiKey.FETCH, versions=(0, 18))
async def handle(ctx: RequestContext) -> Reply:
    body = ctx.request.body
    version = ctx.request.version
    clock = ctx.services.clock  # max_wait_ms runs on the broker's clock: a test moving it ends the wait
    deadline = clock.monotonic() + max(0, body.max_wait_ms) / 1000
    plan = fetch_sessions.begin(ctx)
    if plan.error:
        nothing: list[tuple[str | bytes, Partitions]] = []
        refused = build_fetch_response(ctx.request.correlation_id, nothing, version, error_code=plan.error)
        return RawResponse(refused, contextlib.ExitStack())
    while True:
        stack = contextlib.ExitStack()
        try:
            topics, total, errors, logs = _collect(ctx, stack, plan.topics)
        except BaseException:
            stack.close()  # the regions pinned before the failure
            raise
        done = total >= body.min_bytes or errors or not logs or clock.monotonic() >= deadline
        if done or ctx.client_gone.is_set():
            break
        stack.close()
        appended = trio.Event()  # one for every partition read
        for plog in logs:
            plog.wake_on_append(appended)
        try:
            await wait_any(
                [appended, ctx.client_gone, clock.advanced()],
                clock.trio_deadline(deadline) if math.isfinite(deadline) else trio.current_time() + 3600,
            )
        finally:
            for plog in logs:
                plog.stop_waking(appended)
    if version <= 3:
        try:
            await _downconvert_all(topics, version, ctx.logs.get)
        except BaseException:
            stack.close()
            raise
    answer = plan.answer(topics)
    return RawResponse(
        build_fetch_response(ctx.request.correlation_id, answer, version, session_id=plan.session_id), stack
    )
