"""The time index (hmb.log.time_index) in Kafka's layout, and what uses it.

The ``.timeindex`` beside each ``.index``: 12-byte big-endian entries
``(timestamp, relative offset)`` written every index interval, both columns
increasing; the final entry (the segment's largest timestamp) written at a
roll and the file trimmed; rebuilt at recovery when missing or torn;
lookups by time land on the index's position and walk only from there;
time retention judges a segment by its largest record timestamp.
"""

from __future__ import annotations

import itertools
import random
import struct
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import trio

import hmb.log.time_lookup
from hmb.log.config import LogConfig
from hmb.log.partition import PartitionLog
from hmb.log.time_index import TimeIndex
from kproto.records import RecordBatchBuilder

BASE = 1_700_000_000_000


def _run(fn: Callable[[], Awaitable[Any]]) -> Any:
    async def bounded() -> Any:
        with trio.fail_after(20):
            return await fn()

    return trio.run(bounded)


def _open(directory: Path, *, clean: bool = True, **cfg: Any) -> PartitionLog:
    cfg.setdefault("message_timestamp_before_max_ms", 2**63 - 1)
    cfg.setdefault("message_timestamp_after_max_ms", 2**63 - 1)
    return PartitionLog.open(directory, "t", 0, LogConfig(**cfg), clean=clean)


def _batch(timestamps: list[int], size: int = 100) -> bytes:
    b = RecordBatchBuilder()
    for ts in timestamps:
        b.append(None, b"x" * size, ts)
    return b.build()


def _entries(path: Path) -> list[tuple[int, int]]:
    data = path.read_bytes()
    return [struct.unpack_from(">qi", data, i) for i in range(0, len(data), 12)]


async def _fill(plog: PartitionLog, stamps: list[int]) -> None:
    for ts in stamps:
        await plog.append(_batch([ts]))


def _brute_force(stamps: list[int], target: int) -> tuple[int, int] | None:
    return next(((i, ts) for i, ts in enumerate(stamps) if ts >= target), None)


def test_entries_follow_kafkas_layout_and_the_roll_writes_the_largest(tmp_path: Path) -> None:
    stamps = [BASE + i * 10 for i in range(60)]
    stamps[25] = BASE + 10_000  # a late record: later entries may not go below it

    async def main() -> None:
        plog = _open(tmp_path / "p", index_interval_bytes=300, segment_bytes=4096)
        await _fill(plog, stamps)
        segments = list(plog.segments.values())
        assert len(segments) > 2
        first = segments[0]
        entries = _entries(first.time_index.path)  # trimmed at the roll: no zero padding
        assert entries and len(first.time_index.path.read_bytes()) == 12 * len(entries)
        assert all(a[0] < b[0] and a[1] < b[1] for a, b in itertools.pairwise(entries))
        end = segments[1].base_offset
        assert entries[-1] == (max(stamps[:end]), end - 1 - first.base_offset)
        for ts, rel in entries:  # every record up to the entry's offset is no later than it
            assert max(stamps[: first.base_offset + rel + 1]) <= ts
        plog.close()

    _run(main)


def test_lookups_land_on_the_index_and_walk_only_from_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(7)
    stamps = [BASE + i * 100 + rng.randrange(-250, 250) for i in range(120)]
    starts: list[int] = []
    walk = hmb.log.time_lookup.iter_entries

    def counting(fd: int, start: int, end: int, **kw: Any) -> Any:
        starts.append(start)
        return walk(fd, start, end, **kw)

    monkeypatch.setattr(hmb.log.time_lookup, "iter_entries", counting)

    async def main() -> None:
        plog = _open(tmp_path / "p", index_interval_bytes=200, segment_bytes=4096)
        await _fill(plog, stamps)
        for target in [BASE - 1, *rng.sample(stamps, 30), BASE + 20_000]:
            got = await plog.offset_for_timestamp(target)
            assert (tuple(got) if got else None) == _brute_force(stamps, target), target
        largest = await plog.offset_of_max_timestamp()
        assert largest is not None and tuple(largest) == (stamps.index(max(stamps)), max(stamps))
        starts.clear()
        late = stamps[100]
        await plog.offset_for_timestamp(late)
        assert starts and min(starts) > 0  # not from the segment's start: the index was used
        plog.close()

    _run(main)


@pytest.mark.parametrize("damage", ["missing", "torn", "past the log"])
def test_a_missing_or_torn_time_index_is_rebuilt(tmp_path: Path, damage: str) -> None:
    stamps = [BASE + i * 7 for i in range(50)]

    async def main() -> None:
        plog = _open(tmp_path / "p", index_interval_bytes=200)
        await _fill(plog, stamps)
        plog.close()
        path = plog.active.time_index.path
        good = _entries(path)
        if damage == "missing":
            path.unlink()
        elif damage == "torn":
            path.write_bytes(path.read_bytes() + b"\x01\x02\x03")
        else:
            path.write_bytes(path.read_bytes() + struct.pack(">qi", BASE + 10**6, 10**6))
        again = _open(tmp_path / "p", index_interval_bytes=200)
        assert again.high_watermark == 50
        assert again.active.max_timestamp == max(stamps)
        assert _entries(path)[: len(good) - 1] == good[:-1]  # interval entries as before
        got = await again.offset_for_timestamp(BASE + 7 * 33)
        assert got is not None and tuple(got) == (33, BASE + 7 * 33)
        again.close()
        assert _entries(path) == good  # and the final entry at close

    _run(main)


def test_time_retention_judges_segments_by_their_records_timestamps(tmp_path: Path) -> None:
    day_ms = 86_400_000

    async def main() -> None:
        plog = _open(tmp_path / "p", segment_bytes=2048, retention_ms=7 * day_ms)
        now_ms = BASE + 30 * day_ms
        old = [BASE + i for i in range(20)]  # a month before "now": past retention
        recent = [now_ms - day_ms + i for i in range(20)]
        await _fill(plog, old + recent)
        before = len(plog.segments)
        deleted = await plog.apply_retention(now=now_ms / 1000)  # the files themselves are new
        assert deleted and all(base < len(old) for base in deleted)
        assert plog.log_start_offset <= len(old) and len(plog.segments) < before
        survivor = await plog.offset_for_timestamp(recent[0])
        assert survivor is not None and survivor.offset == len(old)
        plog.close()

    _run(main)


def test_a_full_time_index_rolls_the_segment(tmp_path: Path) -> None:
    """segment.index.bytes 36: three time index entries, the last kept for the final one."""
    stamps = [BASE + i for i in range(40)]

    async def main() -> None:
        plog = _open(tmp_path / "p", index_interval_bytes=100, index_max_bytes=36)
        await _fill(plog, stamps)
        segments = list(plog.segments.values())
        assert len(segments) >= 5  # rolled for the index, not the size (1 GiB)
        for seg, following in itertools.pairwise(segments):
            entries = _entries(seg.time_index.path)
            assert 1 <= len(entries) <= 3
            last_offset = following.base_offset - 1
            assert entries[-1] == (stamps[last_offset], last_offset - seg.base_offset)
        got = await plog.offset_for_timestamp(BASE + 33)
        assert got is not None and tuple(got) == (33, BASE + 33)
        plog.close()

    _run(main)


def test_an_untrimmed_time_index_after_a_crash_loads_only_its_entries(tmp_path: Path) -> None:
    stamps = [BASE + i * 3 for i in range(60)]

    async def main() -> None:
        plog = _open(tmp_path / "p", index_interval_bytes=200)
        await _fill(plog, stamps)
        written = plog.active.time_index.entries_list()
        plog.active.time_index.flush()  # then a crash: no close, no trim
        path = plog.active.time_index.path
        assert path.stat().st_size == 12 * ((10 << 20) // 12)  # preallocated to segment.index.bytes
        loaded = TimeIndex(path, 0, 10 << 20)
        assert len(written) > 5 and loaded.entries_list() == written  # the zero padding is not entries
        again = _open(tmp_path / "p", clean=False, index_interval_bytes=200)
        assert again.active.time_index.entries_list() == written
        assert again.active.max_timestamp == max(stamps)

    _run(main)
