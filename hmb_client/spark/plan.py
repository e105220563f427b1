"""Planning a read: which partitions, which offset ranges, and how to cut them into tasks.

Runs on the driver (in Spark's planning Python worker): it asks the
brokers for metadata and offsets with one :class:`Consumer` that never
joins a group or commits, and turns the answer into :class:`OffsetRange`
pieces, one Spark input partition each.  The cutting and the streaming
rate limit are pure functions, so their arithmetic is tested without a
broker; they follow Spark's ``KafkaOffsetRangeCalculator`` and
``KafkaMicroBatchStream.rateLimit``.
"""

from __future__ import annotations

import itertools
import math
import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from hmb_client.consumer import Consumer
from hmb_client.spark.options import EARLIEST, LATEST, OffsetSpec, OptionError, SourceOptions
from hmb_client.structs import TopicPartition


@dataclass(frozen=True)
class OffsetRange:
    """Records ``start`` (inclusive) to ``end`` (exclusive) of one partition: one Spark task."""

    topic: str
    partition: int
    start: int
    end: int

    @property
    def size(self) -> int:
        return self.end - self.start


def metadata_consumer(opts: SourceOptions) -> Consumer:
    """A consumer for metadata and offsets only: no group, nothing committed.

    Its fetches (see :func:`latest_offsets`) must answer at once, not long-poll.
    """
    settings = {**opts.consumer, "fetch_max_wait_ms": 10}
    return Consumer(opts.bootstrap, client_id="hmb-spark-driver", enable_auto_commit=False, **settings)


def topic_partitions(consumer: Consumer, opts: SourceOptions) -> list[TopicPartition]:
    """The partitions the options select, as they exist now (a missing topic has none)."""
    if opts.assign:
        return sorted(set(opts.assign))
    if opts.subscribe_pattern is not None:
        pattern = re.compile(opts.subscribe_pattern)
        topics = sorted(t for t in consumer.topics() if pattern.fullmatch(t))
    else:
        topics = list(opts.subscribe)
    return sorted(TopicPartition(t, p) for t in topics for p in consumer.partitions_for_topic(t))


def resolve(
    spec: OffsetSpec,
    tps: Iterable[TopicPartition],
    earliest: Mapping[TopicPartition, int],
    latest: Mapping[TopicPartition, int],
    *,
    name: str,
) -> dict[TopicPartition, int]:
    """Turn a spec (``earliest``/``latest``/JSON with -2/-1) into offsets for ``tps``.

    As in Spark, JSON must name every selected partition, and only those.
    """
    wanted = list(tps)
    if isinstance(spec, str):
        return dict(earliest) if spec == "earliest" else dict(latest)
    missing = sorted(set(wanted) - set(spec))
    extra = sorted(set(spec) - set(wanted))
    if missing or extra:
        raise OptionError(
            f"{name} must give an offset for every selected partition and no other: "
            f"missing {[f'{t}-{p}' for t, p in missing]}, not selected {[f'{t}-{p}' for t, p in extra]}"
        )
    code = {EARLIEST: earliest, LATEST: latest}
    return {tp: code[spec[tp]][tp] if spec[tp] in code else spec[tp] for tp in wanted}


def bounds(
    consumer: Consumer, tps: list[TopicPartition]
) -> tuple[dict[TopicPartition, int], dict[TopicPartition, int]]:
    """The earliest and latest (next to be written) offset of each partition."""
    if not tps:
        return {}, {}
    return consumer.beginning_offsets(tps), latest_offsets(consumer, tps)


def latest_offsets(consumer: Consumer, tps: list[TopicPartition]) -> dict[TopicPartition, int]:
    """ListOffsets(latest), checked against the high watermark a Fetch reports.

    Why the Fetch: Tansu (0.6.0, in-memory storage) answers ListOffsets(latest)
    with the last *batch's* base offset + 1, not the log end (librdkafka's
    watermarks show the same), so a read up to "latest" would stop after one
    record per batch; its Fetch high watermark is right.  A Fetch at the
    listed offset returns that watermark; from a broker whose listing is
    right it returns no records, after ``fetch_max_wait_ms`` (10 ms here).  The
    partitions are unassigned again so the consumer does not keep fetching.
    """
    listed = consumer.end_offsets(tps)
    consumer.assign([])  # fresh partition states: no watermark of an earlier call
    consumer.assign(tps)
    try:
        for tp in tps:
            consumer.seek(tp, listed[tp])
        deadline = time.monotonic() + consumer.config.request_timeout_ms / 1000
        while any(consumer.highwater(tp) is None for tp in tps) and time.monotonic() < deadline:
            consumer.poll(0.02, max_records=1)
        return {tp: max(listed[tp], consumer.highwater(tp) or 0) for tp in tps}
    finally:
        consumer.assign([])


def split(
    ranges: list[OffsetRange], min_partitions: int | None, max_records: int | None
) -> list[OffsetRange]:
    """Cut ranges into tasks: none larger than ``max_records``, at least ``min_partitions`` in all.

    Empty ranges are dropped.  With ``min_partitions``, ranges are cut in
    proportion to their size (Spark's rule), so a hot partition gets more tasks.
    """
    pieces: list[OffsetRange] = []
    for r in ranges:
        if r.size <= 0:
            continue
        n = math.ceil(r.size / max_records) if max_records else 1
        pieces.extend(_cut(r, n))
    if min_partitions and len(pieces) < min_partitions:
        total = sum(p.size for p in pieces)
        recut: list[OffsetRange] = []
        for p in pieces:
            share = p.size * min_partitions / total
            recut.extend(_cut(p, max(1, math.floor(share))))
        pieces = recut
    return pieces


def _cut(r: OffsetRange, n: int) -> list[OffsetRange]:
    n = max(1, min(n, r.size))
    bounds_ = [r.start + r.size * i // n for i in range(n + 1)]
    return [OffsetRange(r.topic, r.partition, a, b) for a, b in itertools.pairwise(bounds_)]


def rate_limit(
    start: Mapping[TopicPartition, int], latest: Mapping[TopicPartition, int], max_rows: int
) -> dict[TopicPartition, int]:
    """End offsets that take at most about ``max_rows`` records, shared out by each partition's backlog.

    Spark's ``rateLimit``: a partition's share is ``max_rows * backlog / total``,
    rounded down (up when below one, so a small backlog still moves).
    """
    backlog = {tp: max(0, end - start.get(tp, end)) for tp, end in latest.items()}
    total = sum(backlog.values())
    if total <= max_rows:
        return dict(latest)
    out = {}
    for tp, end in latest.items():
        begin = start.get(tp, end)
        share = max_rows * backlog[tp] / total
        take = math.ceil(share) if share < 1 else math.floor(share)
        out[tp] = min(end, begin + take)
    return out
