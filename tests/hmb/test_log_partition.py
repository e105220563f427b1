"""Tests of one partition's log (hmb.log.partition.PartitionLog).

Appends of every MessageSet flavour, reads for every offset, segment rolls,
Kafka 0.8's getOffsetsBefore, retention, refusal of bad input, all-or-nothing
appends on a full disk (simulated, and with a real tmpfs when running as
root), and the flush policy.  trio code runs under ``trio.run`` inside plain
test functions.
"""

from __future__ import annotations

import errno
import itertools
import os
import shutil
import stat
import subprocess
import time
import types
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

import hmb.log.segment
import kproto
from hmb.log.config import LogConfig
from hmb.log.errors import OffsetOutOfRangeError, RecordListTooLargeError
from hmb.log.partition import PartitionLog
from hmb.log.scan import iter_entries
from kproto.records import Compression, RecordTooLargeError, build_message_set, read_message_set

TOPIC = "events"


def _run(fn: Callable[[], Awaitable[Any]]) -> Any:
    """Run ``fn`` under trio; a deadlock (say, a state MVar never given back) fails, not hangs."""

    async def bounded() -> Any:
        with trio.fail_after(10):
            return await fn()

    return trio.run(bounded)


def _open(directory: Path, *, clean: bool = True, **cfg: Any) -> PartitionLog:
    return PartitionLog.open(directory, TOPIC, 0, LogConfig(**cfg), clean=clean)


def _value(i: int, size: int = 40) -> bytes:
    return f"m{i:06d}".encode().ljust(size, b".")


def _batch(
    first: int, n: int, magic: int = 0, codec: Compression = Compression.NONE, size: int = 40
) -> bytes:
    """``n`` messages whose values name their expected offsets ``first .. first+n-1``."""
    records = [(f"k{i}".encode(), _value(i, size), 1_600_000_000_000 + i) for i in range(first, first + n)]
    return build_message_set(records, magic=magic, compression=codec)


def _records(plog: PartitionLog, offset: int, max_bytes: int = 1 << 20) -> list[Any]:
    with plog.read(offset, max_bytes) as region:
        if region is None:
            return []
        return read_message_set(region.read())


def _consume_all(plog: PartitionLog, max_bytes: int) -> list[Any]:
    """Read from the log start to the high watermark as a consumer does."""
    out: list[Any] = []
    offset = plog.log_start_offset
    while offset < plog.high_watermark:
        got = [r for r in _records(plog, offset, max_bytes) if r.offset >= offset]
        assert got, f"no complete message at offset {offset}"
        out += got
        offset = got[-1].offset + 1
    return out


def _check_values(records: list[Any], first: int = 0) -> None:
    assert [r.offset for r in records] == list(range(first, first + len(records)))
    for r in records:
        assert r.value.startswith(f"m{r.offset:06d}".encode()), (r.offset, r.value[:10])


def _segment_files(directory: Path, suffix: str = ".log") -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.suffix == suffix)


# --------------------------------------------------------------------------- appends and reads

FLAVOURS = [
    (magic, codec)
    for magic in (0, 1)
    for codec in (Compression.NONE, Compression.GZIP, Compression.SNAPPY, Compression.LZ4)
]


def test_appends_of_every_flavour_get_consecutive_offsets(tmp_path: Path) -> None:
    async def main() -> None:
        plog = _open(tmp_path / "p", segment_bytes=1 << 20, index_interval_bytes=256)
        expected = 0
        for round_ in range(3):
            for magic, codec in FLAVOURS:
                n = 1 + (round_ + magic + int(codec)) % 4
                info = await plog.append(_batch(expected, n, magic, codec))
                assert (info.base_offset, info.last_offset, info.count) == (expected, expected + n - 1, n)
                expected += n
                assert plog.high_watermark == expected
        # every offset: the region starts at or before it and contains it
        for offset in range(expected):
            recs = _records(plog, offset)
            assert recs, offset
            assert recs[0].offset <= offset
            assert offset in [r.offset for r in recs]
        all_records = _records(plog, 0)
        _check_values(all_records)
        assert len(all_records) == expected
        # magic and compression survive as written (the broker does not re-encode)
        wrappers = read_message_set(_region_bytes(plog, 0), decompress=False)
        assert {(w.magic, w.attributes & 7) for w in wrappers} == {(m, int(c)) for m, c in FLAVOURS}
        plog.close()

    _run(main)


def _region_bytes(plog: PartitionLog, offset: int) -> bytes:
    with plog.read(offset, 1 << 30) as region:
        assert region is not None
        return region.read()


def test_read_at_high_watermark_is_empty_and_outside_raises(tmp_path: Path) -> None:
    async def main() -> None:
        plog = _open(tmp_path / "p")
        with plog.read(0, 1000) as region:
            assert region is None  # empty log: offset 0 is the high watermark
        await plog.append(_batch(0, 5))
        with plog.read(5, 1000) as region:
            assert region is None
        with plog.read(0, 0) as region:
            assert region is None
        with pytest.raises(OffsetOutOfRangeError):
            with plog.read(6, 1000):
                pass
        with pytest.raises(OffsetOutOfRangeError):
            with plog.read(-1, 1000):
                pass
        # max_bytes cuts the region; the reader drops the partial tail
        with plog.read(0, 100) as region:
            assert region is not None and region.length == 100
            recs = read_message_set(region.read())
        assert 0 < len(recs) < 5 and recs[0].offset == 0
        plog.close()

    _run(main)


def test_segment_roll_and_reads_across_segments(tmp_path: Path) -> None:
    directory = tmp_path / "p"

    async def main() -> list[int]:
        plog = _open(directory, segment_bytes=1024, index_interval_bytes=128)
        n = 0
        bases = []
        for i in range(40):
            magic, codec = FLAVOURS[i % len(FLAVOURS)]
            count = 1 + i % 3
            info = await plog.append(_batch(n, count, magic, codec))
            assert info.base_offset == n
            n += count
        for seg in plog.segments.values():
            assert seg.size <= 1024
            bases.append(seg.base_offset)
        assert len(bases) >= 5
        # every segment starts right after the previous one ends
        segs = list(plog.segments.values())
        for prev, nxt in itertools.pairwise(segs):
            assert prev.next_offset == nxt.base_offset
        assert plog.size_bytes == sum(os.path.getsize(s.log_path) for s in segs)
        # every offset is found, including segment first and last offsets
        for offset in range(n):
            recs = _records(plog, offset)
            assert recs[0].offset <= offset
            assert offset in [r.offset for r in recs]
        # a consumer reading with a small fetch size walks across all boundaries
        _check_values(_consume_all(plog, max_bytes=600))
        records = _consume_all(plog, max_bytes=1 << 20)
        assert len(records) == n
        plog.close()
        return bases

    bases = _run(main)
    assert _segment_files(directory) == [f"{b:020d}.log" for b in bases]
    assert all(len(name) == len("00000000000000000000.log") for name in _segment_files(directory))

    # reopened: same segments, same offsets
    async def reopen() -> None:
        plog = _open(directory, segment_bytes=1024, index_interval_bytes=128)
        assert list(plog.segments) == bases
        total = plog.high_watermark
        _check_values(_consume_all(plog, max_bytes=600))
        info = await plog.append(_batch(total, 2))
        assert info.base_offset == total
        plog.close()

    _run(reopen)


def test_index_entries_point_at_the_right_entries(tmp_path: Path) -> None:
    async def main() -> None:
        plog = _open(tmp_path / "p", index_interval_bytes=200)
        for i in range(60):
            await plog.append(_batch(i, 1))
        seg = plog.active
        entries = seg.index.entries_array().tolist()
        assert len(entries) >= 5
        starts = {e.position: e.last_offset for e in iter_entries(seg.fd, 0, seg.size)}
        for rel, pos in entries:
            assert starts[pos] == seg.base_offset + rel
        plog.close()

    _run(main)


def test_record_list_larger_than_a_segment_is_refused(tmp_path: Path) -> None:
    async def main() -> None:
        plog = _open(tmp_path / "p", segment_bytes=1024)
        with pytest.raises(RecordListTooLargeError):
            await plog.append(_batch(0, 30))
        assert plog.high_watermark == 0 and plog.size_bytes == 0
        plog.close()

    _run(main)


# --------------------------------------------------------------------------- offsets_before


def test_offsets_before(tmp_path: Path) -> None:
    async def main() -> None:
        plog = _open(tmp_path / "p", segment_bytes=1024)
        assert plog.offsets_before(-1, 10) == [0]  # empty log: just the log end
        assert plog.offsets_before(-2, 10) == [0]
        n = 0
        while len(plog.segments) < 3:
            await plog.append(_batch(n, 4))
            n += 4
        b0, b1, b2 = list(plog.segments)
        hw = plog.high_watermark
        for k, seg in enumerate(plog.segments.values()):
            t = 1_000_000 * (k + 1)  # seconds: 1e6, 2e6, 3e6
            os.utime(seg.log_path, (t, t))
        ms = 1_000_000_000  # one "step" of file time in milliseconds

        assert plog.offsets_before(-1, 10) == [hw, b2, b1, b0]
        assert plog.offsets_before(-1, 1) == [hw]
        assert plog.offsets_before(-1, 2) == [hw, b2]
        assert plog.offsets_before(-2, 10) == [b0]
        assert plog.offsets_before(int(2.5 * ms), 10) == [b1, b0]
        assert plog.offsets_before(int(2.5 * ms), 1) == [b1]
        assert plog.offsets_before(2 * ms, 10) == [b1, b0]  # at the exact time: included
        assert plog.offsets_before(3 * ms + 1, 10) == [b2, b1, b0]
        assert plog.offsets_before(int(1.5 * ms), 10) == [b0]
        assert plog.offsets_before(ms - 1, 10) == []  # before everything
        assert plog.offsets_before(int(time.time() * 1000) + 60_000, 10) == [hw, b2, b1, b0]
        assert plog.offsets_before(-1, 0) == []
        plog.close()

    _run(main)


# --------------------------------------------------------------------------- retention


async def _fill_segments(plog: PartitionLog, segments: int) -> int:
    n = 0
    while len(plog.segments) < segments:
        await plog.append(_batch(n, 3))
        n += 3
    # and a little in the active one
    await plog.append(_batch(n, 1))
    return n + 1


def test_retention_by_bytes(tmp_path: Path) -> None:
    directory = tmp_path / "p"

    async def main() -> None:
        plog = _open(directory, segment_bytes=1024, retention_bytes=2500)
        n = await _fill_segments(plog, 6)
        before = list(plog.segments.values())
        total = plog.size_bytes
        deleted = await plog.apply_retention()
        assert deleted, "nothing was deleted"
        assert deleted == [s.base_offset for s in before[: len(deleted)]]
        # Kafka's rule: delete the oldest while the rest still holds retention_bytes
        assert plog.size_bytes >= 2500
        first = plog.segments.peekitem(0)[1]
        assert plog.size_bytes - first.size < 2500
        assert total - plog.size_bytes == sum(s.size for s in before[: len(deleted)])
        for s in before[: len(deleted)]:
            assert not s.log_path.exists() and not s.index_path.exists()
        assert plog.log_start_offset == first.base_offset > 0
        assert plog.offsets_before(-2, 1) == [first.base_offset]
        with pytest.raises(OffsetOutOfRangeError):
            with plog.read(first.base_offset - 1, 1000):
                pass
        _check_values(_consume_all(plog, 1 << 20), first=first.base_offset)
        assert plog.high_watermark == n

        # retention 0: everything but the active segment goes
        plog.config = LogConfig(segment_bytes=1024, retention_bytes=0)
        await plog.apply_retention()
        assert len(plog.segments) == 1
        assert plog.active.size > 0
        assert plog.log_start_offset == plog.active.base_offset
        assert _segment_files(directory) == [f"{plog.active.base_offset:020d}.log"]
        info = await plog.append(_batch(n, 1))
        assert info.base_offset == n
        plog.close()

    _run(main)


def test_retention_by_bytes_boundary(tmp_path: Path) -> None:
    """A segment goes when what remains is still at least retention_bytes (equal counts)."""

    async def main() -> None:
        plog = _open(tmp_path / "p", segment_bytes=1024)
        await _fill_segments(plog, 4)
        sizes = [s.size for s in plog.segments.values()]
        bases = list(plog.segments)
        plog.config = LogConfig(segment_bytes=1024, retention_bytes=sum(sizes[1:]))
        assert await plog.apply_retention() == [bases[0]]
        plog.config = LogConfig(segment_bytes=1024, retention_bytes=sum(sizes[2:]) + 1)
        assert await plog.apply_retention() == []  # deleting the next would leave too little
        assert plog.log_start_offset == bases[1]
        plog.close()

    _run(main)


def test_retention_by_time(tmp_path: Path) -> None:
    directory = tmp_path / "p"

    async def main() -> None:
        plog = _open(directory, segment_bytes=1024, retention_ms=3600_000)
        n = await _fill_segments(plog, 5)
        segs = list(plog.segments.values())
        now = time.time()
        old = now - 5 * 3600
        for seg in segs[:2]:
            os.utime(seg.log_path, (old, old))
        os.utime(segs[3].log_path, (old, old))  # old, but behind a young one: kept (oldest first)
        deleted = await plog.apply_retention(now=now)
        assert deleted == [segs[0].base_offset, segs[1].base_offset]
        assert plog.log_start_offset == segs[2].base_offset
        assert not segs[0].log_path.exists()
        assert segs[3].log_path.exists()

        # all old, the active one too: the active one stays
        for seg in plog.segments.values():
            os.utime(seg.log_path, (old, old))
        await plog.apply_retention(now=now)
        assert list(plog.segments.values()) == [segs[-1]]
        assert plog.high_watermark == n
        _check_values(_consume_all(plog, 1 << 20), first=segs[-1].base_offset)
        plog.close()

    _run(main)


def test_no_retention_limits_keep_everything(tmp_path: Path) -> None:
    async def main() -> None:
        plog = _open(tmp_path / "p", segment_bytes=1024, retention_ms=-1, retention_bytes=-1)
        await _fill_segments(plog, 4)
        for seg in plog.segments.values():
            os.utime(seg.log_path, (1, 1))
        assert await plog.apply_retention() == []
        assert len(plog.segments) == 4
        plog.close()

    _run(main)


def test_read_of_a_segment_deleted_while_pinned(tmp_path: Path) -> None:
    async def main() -> None:
        plog = _open(tmp_path / "p", segment_bytes=1024, retention_bytes=0)
        await _fill_segments(plog, 3)
        with plog.read(0, 1 << 20) as region:
            assert region is not None
            await plog.apply_retention()
            assert not region.segment.log_path.exists()
            # the descriptor stays usable until the read is done
            _check_values(read_message_set(region.read()))
        assert region.segment.fd == -1
        plog.close()

    _run(main)


# --------------------------------------------------------------------------- refusals


def _snapshot(plog: PartitionLog) -> tuple[int, int, bytes]:
    return plog.high_watermark, plog.size_bytes, plog.active.log_path.read_bytes()


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", [Compression.NONE, Compression.GZIP])
def test_corrupt_append_changes_nothing(tmp_path: Path, magic: int, codec: Compression) -> None:
    async def main() -> None:
        plog = _open(tmp_path / "p")
        await plog.append(_batch(0, 3, magic, codec))
        before = _snapshot(plog)
        good = _batch(3, 3, magic, codec)
        for pos in (len(good) - 1, 20, len(good) // 2):
            bad = bytearray(good)
            bad[pos] ^= 0x40
            with pytest.raises(kproto.CorruptRecordError):
                await plog.append(bytes(bad))
            assert _snapshot(plog) == before
        with pytest.raises(kproto.CorruptRecordError):  # truncated
            await plog.append(good[:-3])
        assert _snapshot(plog) == before
        info = await plog.append(good)
        assert info.base_offset == 3
        _check_values(_records(plog, 0))
        plog.close()

    _run(main)


def test_message_over_max_message_bytes_is_refused(tmp_path: Path) -> None:
    async def main() -> None:
        plog = _open(tmp_path / "p", max_message_bytes=200)
        await plog.append(_batch(0, 2, size=50))
        before = _snapshot(plog)
        with pytest.raises(RecordTooLargeError):
            await plog.append(_batch(2, 2, size=300))
        assert _snapshot(plog) == before
        # one big message in an otherwise fine set is enough
        mixed = _batch(2, 1, size=50) + build_message_set([(None, b"x" * 400)])
        with pytest.raises(RecordTooLargeError):
            await plog.append(mixed)
        assert _snapshot(plog) == before
        assert (await plog.append(_batch(2, 1, size=50))).base_offset == 2
        plog.close()

    _run(main)


# --------------------------------------------------------------------------- disk full


def _os_proxy(**overrides: Any) -> types.SimpleNamespace:
    """A stand-in for ``os`` inside hmb.log.segment only (trio keeps the real one)."""
    ns = types.SimpleNamespace(**{k: getattr(os, k) for k in dir(os) if not k.startswith("__")})
    for k, v in overrides.items():
        setattr(ns, k, v)
    return ns


def test_disk_full_append_leaves_the_file_as_it_was(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []

    def write_half_then_enospc(fd: int, data: Any) -> int:
        calls.append(len(data))
        if len(calls) == 1:
            return os.write(fd, bytes(data[: len(data) // 2]))  # a short write first
        raise OSError(errno.ENOSPC, "No space left on device")

    async def main() -> None:
        plog = _open(tmp_path / "p", index_interval_bytes=64)
        await plog.append(_batch(0, 5))
        before = _snapshot(plog)
        entries_before = plog.active.index.entries
        with monkeypatch.context() as m:
            m.setattr(hmb.log.segment, "os", _os_proxy(write=write_half_then_enospc))
            with pytest.raises(OSError) as exc_info:
                await plog.append(_batch(5, 4))
        assert exc_info.value.errno == errno.ENOSPC
        assert len(calls) == 2  # the partial write really happened
        assert _snapshot(plog) == before
        assert os.path.getsize(plog.active.log_path) == before[1]
        assert plog.active.index.entries == entries_before
        info = await plog.append(_batch(5, 4))
        assert (info.base_offset, info.last_offset) == (5, 8)
        _check_values(_records(plog, 0))
        assert len(_records(plog, 0)) == 9
        plog.close()

    _run(main)


def _try_mount_tmpfs(target: Path, size: str) -> str | None:
    """Mount a tmpfs at ``target``; the reason when that is not possible."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "needs root to mount a tmpfs"
    if shutil.which("mount") is None:
        return "no mount command"
    target.mkdir()
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(target)],
        capture_output=True,
        text=True,
        timeout=20,
    )
    if proc.returncode != 0:
        return f"mount failed: {proc.stderr.strip() or proc.returncode}"
    return None


def test_real_full_tmpfs(tmp_path: Path) -> None:
    """Fill a 256 KiB tmpfs until an append fails with ENOSPC: nothing acknowledged is lost."""
    mnt = tmp_path / "small"
    reason = _try_mount_tmpfs(mnt, "256k")
    if reason:
        pytest.skip(reason)
    try:
        _fill_tmpfs(mnt / "p")
    finally:
        proc = subprocess.run(["umount", str(mnt)], capture_output=True, timeout=20)
        if proc.returncode != 0:
            subprocess.run(["umount", "-l", str(mnt)], capture_output=True, timeout=20)


def _fill_tmpfs(directory: Path) -> None:
    # The index page is touched (and so allocated) by the first entry, long before the
    # disk is full: an mmap write on a full tmpfs would be a SIGBUS, not an OSError.
    cfg: dict[str, Any] = {"segment_bytes": 4 << 20, "index_interval_bytes": 1024, "index_max_bytes": 4096}
    acked: list[int] = []

    async def fill() -> tuple[int, int]:
        plog = _open(directory, **cfg)
        failures = 0
        try:
            n = 0
            while failures < 3 and n < 10_000:
                size = 700 + 37 * (n % 11)
                hw, nbytes = plog.high_watermark, plog.size_bytes
                try:
                    info = await plog.append(_batch(n, 1, size=size))
                except OSError as exc:
                    assert exc.errno == errno.ENOSPC
                    failures += 1
                    # the failed append took nothing: same offsets, same bytes on disk
                    assert (plog.high_watermark, plog.size_bytes) == (hw, nbytes)
                    assert os.path.getsize(plog.active.log_path) == nbytes
                    n += 1  # try a smaller message next (the sizes cycle)
                    continue
                assert info.base_offset == len(acked)
                acked.append(n)
                n += 1
            assert failures, "the tmpfs never filled up"
            return plog.high_watermark, plog.size_bytes
        finally:
            plog.close()

    hw, nbytes = _run(fill)
    assert hw == len(acked) > 100

    async def reopen() -> None:
        plog = _open(directory, clean=False, **cfg)  # full validation, as after a crash
        try:
            assert plog.high_watermark == len(acked)
            assert plog.size_bytes == nbytes
            records = _consume_all(plog, 1 << 20)
            assert [r.offset for r in records] == list(range(len(acked)))
            assert [r.value[:7] for r in records] == [f"m{n:06d}".encode() for n in acked]
        finally:
            plog.close()

    _run(reopen)


# --------------------------------------------------------------------------- flushing


def _count_fsync(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The segment files fsync'd (a new segment's directory, synced once, is not counted)."""
    synced: list[int] = []

    def spy(fd: int) -> None:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            synced.append(fd)
        os.fsync(fd)

    monkeypatch.setattr(hmb.log.segment, "os", _os_proxy(fsync=spy))
    return synced


def test_flush_every_message(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced = _count_fsync(monkeypatch)

    async def main() -> None:
        plog = _open(tmp_path / "p", flush_interval_messages=1)
        for i in range(5):
            await plog.append(_batch(i, 1))
            assert len(synced) == i + 1
            assert synced[-1] == plog.active.fd
        plog.close()

    _run(main)


def test_flush_every_n_messages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced = _count_fsync(monkeypatch)

    async def main() -> None:
        plog = _open(tmp_path / "p", flush_interval_messages=3)
        counts = []
        for i in range(7):
            await plog.append(_batch(i, 1))
            counts.append(len(synced))
        assert counts == [0, 0, 1, 1, 1, 2, 2]
        await plog.append(_batch(7, 5))  # one append of 5 crosses the threshold at once
        assert len(synced) == 3
        plog.close()

    _run(main)


def test_no_flush_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced = _count_fsync(monkeypatch)

    async def main() -> None:
        plog = _open(tmp_path / "p")
        for i in range(20):
            await plog.append(_batch(i, 1))
        assert synced == []
        await plog.flush()  # the scheduler's explicit flush does sync
        assert synced == [plog.active.fd]
        await plog.flush()  # nothing new: no second fsync
        assert len(synced) == 1
        plog.close()

    _run(main)


def test_an_append_wakes_a_waiting_fetch(tmp_path: Path) -> None:
    async def main() -> None:
        plog = _open(tmp_path / "p")
        woke: list[int] = []

        async def waiter() -> None:
            event = trio.Event()
            plog.wake_on_append(event)
            await event.wait()
            woke.append(plog.high_watermark)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(waiter)
            await trio.testing.wait_all_tasks_blocked()
            assert woke == []
            await plog.append(_batch(0, 2))
        assert woke == [2]
        plog.close()

    _run(main)
