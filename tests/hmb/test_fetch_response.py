"""The Fetch response fast path (kproto.fetch_fast) agrees with the Construct grammar at v0.

A ``struct`` fast path is only trusted with a property test proving it equals the
grammar on generated inputs (every version kproto declares: test_modern_fetch_response).
Here: the parts of ``build_fetch_response``, with every FileRegion read back, are byte
for byte ``kproto.encode_response`` of the same body; records ``None`` are sent as
empty bytes (never null).  The regions are real: slices of a segment file on disk, as
the log hands them out.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import trio
from hypothesis import given
from hypothesis import strategies as st

import kproto
from hmb.log.config import LogConfig
from hmb.log.partition import PartitionLog
from hmb.log.region import FileRegion
from hmb.log.segment import LogSegment
from kproto.fetch_fast import PartitionData, build_fetch_response
from kproto.records import build_message_set, read_message_set

INT32 = st.integers(-(2**31), 2**31 - 1)
INT16 = st.integers(-(2**15), 2**15 - 1)
INT64 = st.integers(-(2**63), 2**63 - 1)
TOPIC = st.text(st.characters(blacklist_categories=("Cs",)), max_size=20)


def _run(fn: Callable[[], Awaitable[Any]]) -> Any:
    """Run ``fn`` under trio, bounded: a deadlock fails the test instead of hanging it."""

    async def bounded() -> Any:
        with trio.fail_after(10):
            return await fn()

    return trio.run(bounded)


def _segment_with_bytes(directory: Path, size: int) -> LogSegment:
    seg = LogSegment(directory, 0)
    seg.append(os.urandom(size), 0)  # any bytes: the response does not look inside
    return seg


def _expected_records(records: Any) -> bytes:
    if records is None:
        return b""
    if isinstance(records, FileRegion):
        return records.read()
    return bytes(records)


def _joined(parts: list[bytes | FileRegion]) -> bytes:
    return b"".join(p.read() if isinstance(p, FileRegion) else p for p in parts)


def _body(topics: list[tuple[str, list[PartitionData]]]) -> dict[str, Any]:
    return {
        "responses": [
            {
                "topic": name,
                "partitions": [
                    {
                        "partition_index": pd.partition,
                        "error_code": pd.error_code,
                        "high_watermark": pd.high_watermark,
                        "records": _expected_records(pd.records),
                    }
                    for pd in partitions
                ],
            }
            for name, partitions in topics
        ]
    }


def _check(correlation_id: int, topics: list[tuple[str, list[PartitionData]]]) -> None:
    parts = build_fetch_response(correlation_id, topics)
    assert _joined(parts) == kproto.encode_response(1, 0, correlation_id, _body(topics))
    # zero-copy: every region is handed on as the region itself, never copied into bytes
    regions = [pd.records for _, pds in topics for pd in pds if isinstance(pd.records, FileRegion)]
    assert [p for p in parts if isinstance(p, FileRegion)] == regions
    assert all(a is b for a, b in zip([p for p in parts if isinstance(p, FileRegion)], regions, strict=True))
    assert all(isinstance(p, (bytes, FileRegion)) for p in parts)


def test_matches_construct_grammar(tmp_path: Path) -> None:
    seg = _segment_with_bytes(tmp_path, 5000)

    @st.composite
    def region(draw: st.DrawFn) -> FileRegion:
        position = draw(st.integers(0, seg.size))
        length = draw(st.integers(0, seg.size - position))
        return FileRegion(seg, position, length)

    records = st.one_of(st.none(), st.binary(max_size=300), region())
    partition = st.builds(PartitionData, INT32, INT16, INT64, records)
    topics = st.lists(st.tuples(TOPIC, st.lists(partition, max_size=5)), max_size=4)

    @given(correlation_id=INT32, topics=topics)
    def prop(correlation_id: int, topics: list[tuple[str, list[PartitionData]]]) -> None:
        _check(correlation_id, topics)

    try:
        prop()
    finally:
        seg.close()


def test_empty_and_null_records_are_empty_bytes(tmp_path: Path) -> None:
    seg = _segment_with_bytes(tmp_path, 100)
    partitions = [
        PartitionData(0, 0, 5, None),
        PartitionData(1, 3, 0, b""),
        PartitionData(2, 0, 9, FileRegion(seg, 10, 0)),
    ]
    topics = [("t", partitions)]
    parts = build_fetch_response(42, topics)
    frame = _joined(parts)
    assert frame == kproto.encode_response(1, 0, 42, _body(topics))
    # each records field is length 0, not -1 (null): librdkafka rejects null record sets
    assert b"\xff\xff\xff\xff" not in frame
    decoded = kproto.decode_response(1, 0, frame)
    assert [p.records for p in decoded.body.responses[0].partitions] == [b"", b"", b""]
    seg.close()


def test_no_topics() -> None:
    parts = build_fetch_response(7, [])
    assert parts == [kproto.encode_response(1, 0, 7, {"responses": []})]


def test_real_log_regions(tmp_path: Path) -> None:
    """Regions as PartitionLog.read hands them out, two partitions, a partial last message."""

    async def main() -> None:
        logs = [PartitionLog.open(tmp_path / f"t-{p}", "t", p, LogConfig(), clean=True) for p in range(2)]
        for p, plog in enumerate(logs):
            await plog.append(build_message_set([(None, f"p{p}-{i}".encode() * 5) for i in range(10)]))
        with logs[0].read(3, 1 << 20) as r0, logs[1].read(0, 150) as r1:
            assert r0 is not None and r1 is not None
            topics = [("t", [PartitionData(0, 0, 10, r0), PartitionData(1, 0, 10, r1)])]
            parts = build_fetch_response(99, topics)
            frame = _joined(parts)
            assert frame == kproto.encode_response(1, 0, 99, _body(topics))
            decoded = kproto.decode_response(1, 0, frame)
            p0, p1 = decoded.body.responses[0].partitions
            assert [r.offset for r in read_message_set(p0.records)] == list(range(3, 10))
            got = read_message_set(p1.records)  # cut at 150 bytes: the partial tail is dropped
            assert 0 < len(got) < 10 and got[0].value.startswith(b"p1-0")
        for plog in logs:
            plog.close()

    _run(main)
