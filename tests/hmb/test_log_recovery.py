"""Tests of loading the log after a clean and an unclean shutdown (hmb.log.manager).

Kafka's rule: ``.kafka_cleanshutdown`` in a log dir (written by close(),
removed at load) means the files can be trusted; without it the last segment
of every partition is validated and a torn or corrupt tail is cut off.  An
index that cannot be trusted (missing, misaligned, pointing past the log) is
rebuilt either way.  Every damage below is followed by: what was logged, the
high watermark, every message before the damage, the rebuilt index, and a
produce that continues at the right offset.
"""

from __future__ import annotations

import logging
import os
import struct
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import trio
from durability import index_pairs

from hmb.log.config import LogConfig
from hmb.log.manager import CLEAN_SHUTDOWN_FILE, LogManager
from hmb.log.partition import PartitionLog
from hmb.log.scan import Entry, iter_entries
from hmb.log.segment import LogSegment
from kproto.records import build_message_set, read_message_set

TOPIC = "events"
N = 150  # three segments of ~4 KiB, the last one with several index entries
CFG = LogConfig(segment_bytes=4096, index_interval_bytes=256)


def _run(fn: Callable[[], Awaitable[Any]]) -> Any:
    """Run ``fn`` under trio, bounded: a deadlock fails the test instead of hanging it."""

    async def bounded() -> Any:
        with trio.fail_after(10):
            return await fn()

    return trio.run(bounded)


def _message(i: int) -> bytes:
    return build_message_set([(f"k{i}".encode(), f"m{i:06d}".encode().ljust(40, b"."))])


def _manager(data: Path) -> LogManager:
    mgr = LogManager([data], CFG)
    mgr.load()
    return mgr


def _plog(mgr: LogManager) -> PartitionLog:
    plog = mgr.get(TOPIC, 0)
    assert plog is not None
    plog.load()  # after a clean stop a partition reads its files at first use: use it now
    return plog


def _produce(data: Path, n: int) -> tuple[LogManager, list[list[int]]]:
    """A manager holding ``n`` messages; also the index entries of the last segment."""

    async def main() -> LogManager:
        mgr = _manager(data)
        mgr.create_topic(TOPIC, 1)
        plog = _plog(mgr)
        for i in range(n):
            info = await plog.append(_message(i))
            assert info.base_offset == i
        return mgr

    mgr = _run(main)
    plog = _plog(mgr)
    assert len(plog.segments) >= 3
    entries = plog.active.index.entries_array().tolist()
    assert len(entries) >= 3
    return mgr, entries


def _crash(mgr: LogManager) -> None:
    """Stop the way a killed process does: data on disk, index untrimmed, no marker."""
    for plog in mgr.all_logs():
        for seg in plog.segments.values():
            os.fsync(seg.fd)
            seg.index.flush()
            seg.index._mm = None  # unmapped without the trim that close() does
            os.close(seg.fd)
            seg.fd = -1


def _stop(mgr: LogManager, clean: bool) -> None:
    if clean:
        mgr.close()
        assert (mgr.log_dirs[0] / CLEAN_SHUTDOWN_FILE).exists()
    else:
        _crash(mgr)
        assert not (mgr.log_dirs[0] / CLEAN_SHUTDOWN_FILE).exists()


def _partition_dir(data: Path) -> Path:
    return data / f"{TOPIC}-0"


def _segment_logs(data: Path) -> list[Path]:
    return sorted(_partition_dir(data).glob("*.log"))


def _entries_of(path: Path) -> list[Entry]:
    fd = os.open(path, os.O_RDONLY)
    try:
        out = list(iter_entries(fd, 0, os.fstat(fd).st_size))
    finally:
        os.close(fd)
    assert all(isinstance(e, Entry) for e in out)
    return out  # type: ignore[return-value]


# --------------------------------------------------------------------------- damages
# Each takes the data dir and returns (messages that survive, position the last segment
# is cut at or None, the word the log must say).


def _last(data: Path) -> tuple[Path, Entry]:
    log = _segment_logs(data)[-1]
    return log, _entries_of(log)[-1]


def torn_header(data: Path) -> tuple[int, int | None, str]:
    log, last = _last(data)
    os.truncate(log, last.position + 5)
    return N - 1, last.position, "(torn header (5 bytes left))"


def torn_payload(data: Path) -> tuple[int, int | None, str]:
    log, last = _last(data)
    os.truncate(log, last.position + 20)
    return N - 1, last.position, "bytes announced, 20 present)"


def bad_crc(data: Path) -> tuple[int, int | None, str]:
    log, last = _last(data)
    with open(log, "r+b") as f:
        f.seek(last.position + last.size - 3)  # inside the value: only the CRC can tell
        byte = f.read(1)
        f.seek(-1, os.SEEK_CUR)
        f.write(bytes([byte[0] ^ 0x5A]))
    return N - 1, last.position, "(CRC mismatch)"


def garbage(data: Path) -> tuple[int, int | None, str]:
    log, _ = _last(data)
    with open(log, "ab") as f:
        f.write(b"\xde\xad\xbe\xef" * 9)
    return N, None, "truncated 36 bytes (impossible entry size"


def plausible_garbage(data: Path) -> tuple[int, int | None, str]:
    """A header that frames correctly (offset, size, magic) over bytes that are not a message."""
    log, _ = _last(data)
    with open(log, "ab") as f:
        f.write(struct.pack(">qiIbb", N, 30, 0x12345678, 0, 0) + b"\x07" * 24)
    return N, None, "truncated 42 bytes (CRC mismatch)"


def zero_tail(data: Path) -> tuple[int, int | None, str]:
    log, _ = _last(data)
    with open(log, "ab") as f:
        f.write(bytes(4096))  # a file extended but never written (crash after ftruncate)
    return N, None, "truncated 4096 bytes (entry size 0 too small)"


def index_past_end(data: Path) -> tuple[int, int | None, str]:
    log, _ = _last(data)
    index = log.with_suffix(".index")
    pairs = index_pairs(index)
    rel, _pos = pairs[-1]
    with open(index, "r+b") as f:
        f.seek(len(pairs) * 8)
        f.write(struct.pack(">II", rel + 500, log.stat().st_size + 1000))
    return N, None, "index rebuilt (index entry points past the end of the log)"


def deleted_index(data: Path) -> tuple[int, int | None, str]:
    log, _ = _last(data)
    log.with_suffix(".index").unlink()
    return N, None, "index rebuilt (index file missing)"


def deleted_older_index(data: Path) -> tuple[int, int | None, str]:
    _segment_logs(data)[0].with_suffix(".index").unlink()
    return N, None, "index rebuilt (index file missing)"


def misaligned_index(data: Path) -> tuple[int, int | None, str]:
    log, _ = _last(data)
    index = log.with_suffix(".index")
    pairs = index_pairs(index)
    index.write_bytes(b"".join(struct.pack(">II", *p) for p in pairs) + b"\x01\x02\x03")
    return N, None, "index rebuilt (index file size not a multiple of 8 (torn entry))"


TAIL_DAMAGES = [torn_header, torn_payload, garbage, plausible_garbage, zero_tail]
INDEX_DAMAGES = [index_past_end, deleted_index, deleted_older_index, misaligned_index]
Damage = Callable[[Path], tuple[int, int | None, str]]

# After a clean shutdown only the tail past the last index entry is walked (not the whole
# segment), but that walk checks CRCs too, so every damage is found in both modes.
CASES = [
    pytest.param(damage, clean, id=f"{'clean' if clean else 'unclean'}-{damage.__name__}")
    for clean in (False, True)
    for damage in [*TAIL_DAMAGES, bad_crc, *INDEX_DAMAGES]
]


def _check_index(seg: LogSegment) -> None:
    """Every entry points at the start of an entry whose last offset is base + relative."""
    starts = {e.position: e.last_offset for e in _entries_of(seg.log_path)}
    for rel, pos in seg.index.entries_array().tolist():
        assert starts.get(pos) == seg.base_offset + rel, (rel, pos)


def _read_all(plog: PartitionLog) -> list[Any]:
    out: list[Any] = []
    offset = plog.log_start_offset
    while offset < plog.high_watermark:
        with plog.read(offset, 1 << 20) as region:
            assert region is not None
            got = [r for r in read_message_set(region.read()) if r.offset >= offset]
        assert got
        out += got
        offset = got[-1].offset + 1
    return out


def _check_messages(records: list[Any], n: int) -> None:
    assert [r.offset for r in records] == list(range(n))
    assert [r.value[:7] for r in records] == [f"m{i:06d}".encode() for i in range(n)]


@pytest.mark.parametrize(("damage", "clean"), CASES)
def test_recovery(tmp_path: Path, caplog: pytest.LogCaptureFixture, damage: Damage, clean: bool) -> None:
    caplog.set_level(logging.INFO, logger="hmb")
    data = tmp_path / "data"
    mgr, index_before = _produce(data, N)
    _stop(mgr, clean)
    survivors, cut, word = damage(data)
    sizes_before = [p.stat().st_size for p in _segment_logs(data)]
    caplog.clear()

    mgr = _manager(data)
    assert not (data / CLEAN_SHUTDOWN_FILE).exists()  # removed at load
    plog = _plog(mgr)
    messages = [r.getMessage() for r in caplog.records]
    assert any(word in m for m in messages), messages
    assert any("recovered" in m and TOPIC in m for m in messages), messages

    assert plog.high_watermark == survivors
    _check_messages(_read_all(plog), survivors)
    last = plog.active
    expected_size = cut if cut is not None else sum(e.size for e in _entries_of(last.log_path))
    assert last.size == expected_size == os.path.getsize(last.log_path)
    if cut is None and damage not in (garbage, plausible_garbage, zero_tail):
        # an index damage never costs a message or a byte of the log
        assert [p.stat().st_size for p in _segment_logs(data)] == sizes_before
    # the index was rebuilt: exactly what the appends had built, minus what was cut
    for seg in plog.segments.values():
        _check_index(seg)
    rebuilt = last.index.entries_array().tolist()
    assert rebuilt == [e for e in index_before if cut is None or e[1] < cut]
    first = plog.segments.peekitem(0)[1]
    assert first.index.entries > 0  # older segments keep (or get back) their index

    async def produce_more() -> None:
        for i in range(survivors, survivors + 5):
            info = await plog.append(_message(i))
            assert info.base_offset == i

    _run(produce_more)
    _check_messages(_read_all(plog), survivors + 5)
    mgr.close()

    # and the repaired log loads cleanly, without another repair
    caplog.clear()
    again = _manager(data)
    assert _plog(again).high_watermark == survivors + 5
    assert not any("recovered" in r.getMessage() for r in caplog.records)
    _check_messages(_read_all(_plog(again)), survivors + 5)
    again.close()


def test_clean_shutdown_marker_and_no_recovery(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="hmb")
    data = tmp_path / "data"
    mgr, index_before = _produce(data, N)
    mgr.close()
    assert (data / CLEAN_SHUTDOWN_FILE).exists()
    # close() trims every index to its entries
    for log in _segment_logs(data):
        assert log.with_suffix(".index").stat().st_size % 8 == 0
    assert index_pairs(_segment_logs(data)[-1].with_suffix(".index")) == [tuple(e) for e in index_before]
    caplog.clear()

    mgr = _manager(data)
    assert not (data / CLEAN_SHUTDOWN_FILE).exists()
    assert not any("recovered" in r.getMessage() for r in caplog.records)
    assert not any("unclean" in r.getMessage() for r in caplog.records)
    plog = _plog(mgr)
    assert plog.high_watermark == N
    assert plog.active.index.entries_array().tolist() == index_before
    _check_messages(_read_all(plog), N)
    # a crash now (marker already gone) means a full check next time
    _crash(mgr)
    caplog.clear()
    mgr = _manager(data)
    messages = [r.getMessage() for r in caplog.records]
    assert any("recovered" in m for m in messages), messages
    assert any("unclean" in m for m in messages), messages
    assert _plog(mgr).high_watermark == N
    mgr.close()


def test_unclean_without_damage_keeps_everything(tmp_path: Path) -> None:
    data = tmp_path / "data"
    mgr, index_before = _produce(data, N)
    sizes = [p.stat().st_size for p in _segment_logs(data)]
    _crash(mgr)
    # the crash left the active index preallocated (untrimmed)
    assert _segment_logs(data)[-1].with_suffix(".index").stat().st_size == CFG.index_max_bytes
    mgr = _manager(data)
    plog = _plog(mgr)
    assert plog.high_watermark == N
    assert [p.stat().st_size for p in _segment_logs(data)] == sizes
    assert plog.active.index.entries_array().tolist() == index_before
    _check_messages(_read_all(plog), N)
    mgr.close()


def test_torn_only_message_of_the_newest_segment(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The cut empties the last segment: the log ends where the previous segment ends."""
    caplog.set_level(logging.INFO, logger="hmb")
    data = tmp_path / "data"

    async def main() -> tuple[LogManager, int]:
        mgr = _manager(data)
        mgr.create_topic(TOPIC, 1)
        plog = _plog(mgr)
        i = 0
        while len(plog.segments) < 2:
            await plog.append(_message(i))
            i += 1
        return mgr, i

    mgr, n = _run(main)
    base = _plog(mgr).active.base_offset
    assert base == n - 1
    _crash(mgr)
    log = _segment_logs(data)[-1]
    os.truncate(log, 30)
    mgr = _manager(data)
    plog = _plog(mgr)
    assert any("truncated" in r.getMessage() for r in caplog.records)
    assert plog.high_watermark == base
    assert plog.active.size == 0
    _check_messages(_read_all(plog), base)

    async def more() -> None:
        assert (await plog.append(_message(base))).base_offset == base

    _run(more)
    _check_messages(_read_all(plog), base + 1)
    mgr.close()


def test_manager_layout_and_topic_names(tmp_path: Path) -> None:
    data = tmp_path / "data"
    mgr = _manager(data)
    logs = mgr.create_topic("my-topic.v2", 3)
    assert [p.name for p in sorted(data.iterdir()) if p.is_dir()] == [f"my-topic.v2-{i}" for i in range(3)]
    assert mgr.create_topic("my-topic.v2", 5) is logs  # idempotent
    for bad in ("", ".", "..", "a/b", "x" * 250, "sp ace"):
        with pytest.raises(ValueError):
            mgr.create_topic(bad, 1)
    mgr.close()
    (data / "not-a-partition-x").mkdir()
    again = _manager(data)
    assert sorted(again.topics) == ["my-topic.v2"]
    assert len(again.topics["my-topic.v2"]) == 3
    again.close()


def test_clean_reload_of_unindexed_segments_does_not_recover(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Segments too small for an index entry still leave an index file at close, so a
    clean reload cannot mistake them for segments whose index was lost."""
    caplog.set_level(logging.INFO, logger="hmb")
    data = tmp_path / "data"
    mgr = LogManager([data], LogConfig(segment_bytes=1024, index_interval_bytes=1 << 20))
    mgr.load()
    mgr.create_topic(TOPIC, 1)
    plog = _plog(mgr)

    async def main() -> None:
        for i in range(40):
            await plog.append(_message(i))

    _run(main)
    assert len(plog.segments) >= 3
    assert all(seg.index.entries == 0 for seg in plog.segments.values())
    mgr.close()
    assert all(log.with_suffix(".index").exists() for log in _segment_logs(data))
    caplog.clear()
    again = LogManager([data], LogConfig(segment_bytes=1024, index_interval_bytes=1 << 20))
    again.load()
    assert not any("recovered" in r.getMessage() for r in caplog.records)
    assert _plog(again).high_watermark == 40
    _check_messages(_read_all(_plog(again)), 40)
    again.close()
