"""Tests of the sparse offset index (hmb.log.index.OffsetIndex).

The lookup is checked against a linear-scan oracle on generated entries; the
file format against Kafka's layout (8-byte big-endian ``(relative offset,
position)`` pairs), including what an unclean shutdown leaves behind: a
preallocated, untrimmed file padded with zeros.
"""

from __future__ import annotations

import struct
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hmb.log.index import ENTRY_SIZE, OffsetIndex

BASE = 1000


def _oracle(entries: list[tuple[int, int]], base: int, offset: int) -> tuple[int, int]:
    """Last entry whose absolute offset is <= ``offset``, else the segment start."""
    best = (base, 0)
    for rel, pos in entries:
        if base + rel <= offset:
            best = (base + rel, pos)
    return best


# Entries as the segment writes them: relative offsets and positions strictly increasing,
# positions never 0 (the segment start is never indexed).
_steps = st.lists(st.tuples(st.integers(1, 50), st.integers(1, 5000)), max_size=60)


def _entries_from(steps: list[tuple[int, int]]) -> list[tuple[int, int]]:
    rel, pos = 0, 0
    out = []
    for d_rel, d_pos in steps:
        rel += d_rel
        pos += d_pos
        out.append((rel, pos))
    return out


@given(steps=_steps, queries=st.lists(st.integers(0, 4000), max_size=40), repeats=st.booleans())
def test_lookup_matches_linear_scan(steps: list[tuple[int, int]], queries: list[int], repeats: bool) -> None:
    entries = _entries_from(steps)
    with tempfile.TemporaryDirectory() as d:
        idx = OffsetIndex(Path(d) / "x.index", BASE, max_bytes=4096)
        for rel, pos in entries:
            idx.append(BASE + rel, pos)
            if repeats:  # a repeated (or lower) offset adds nothing
                idx.append(BASE + rel, pos + 1)
        assert idx.entries == len(entries)
        assert idx.entries_array().tolist() == [list(e) for e in entries]
        probes = [BASE + q for q in queries]
        probes += [BASE + r for r, _ in entries] + [BASE + r - 1 for r, _ in entries]
        probes += [0, BASE - 1, BASE, BASE + (1 << 33)]
        for offset in probes:
            assert idx.lookup(offset) == _oracle(entries, BASE, offset)
        if entries:
            assert idx.last_entry() == (BASE + entries[-1][0], entries[-1][1])
        else:
            assert idx.last_entry() == (BASE, 0)
        idx.close()


def test_full_index_refuses_more_entries(tmp_path: Path) -> None:
    idx = OffsetIndex(tmp_path / "x.index", 0, max_bytes=4 * ENTRY_SIZE)
    for i in range(4):
        idx.append(i + 1, (i + 1) * 100)
    assert idx.full
    with pytest.raises(IndexError):
        idx.append(10, 1000)
    assert idx.entries == 4
    idx.close()


def test_close_trims_and_reopen_restores(tmp_path: Path) -> None:
    path = tmp_path / "00000000000000001000.index"
    entries = [(3, 4100), (9, 8300), (20, 12400), (21, 16600)]
    idx = OffsetIndex(path, BASE, max_bytes=1024)
    for rel, pos in entries:
        idx.append(BASE + rel, pos)
    assert path.stat().st_size == 1024  # preallocated while open, as Kafka does
    idx.close()
    assert path.stat().st_size == len(entries) * ENTRY_SIZE
    # Kafka's layout: big-endian u32 pairs, offsets relative to the base.
    raw = path.read_bytes()
    assert [struct.unpack_from(">II", raw, i * 8) for i in range(len(entries))] == entries

    again = OffsetIndex(path, BASE, max_bytes=1024)
    assert again.entries == len(entries)
    assert again.entries_array().tolist() == [list(e) for e in entries]
    assert again.lookup(BASE + 10) == (BASE + 9, 8300)
    assert again.sane(log_size=16601)
    assert not again.sane(log_size=16600)  # last entry must point inside the log
    # appending after a reopen continues the same file
    again.append(BASE + 30, 20000)
    again.close()
    third = OffsetIndex(path, BASE, max_bytes=1024)
    assert third.entries_array().tolist() == [*[list(e) for e in entries], [30, 20000]]
    third.close()


def test_untrimmed_preallocated_file_loads_valid_prefix(tmp_path: Path) -> None:
    """A crash leaves the file at its preallocated size, zero padded: only the entries count."""
    path = tmp_path / "a.index"
    idx = OffsetIndex(path, 0, max_bytes=800)
    for i in range(1, 6):
        idx.append(i * 10, i * 4096)
    idx.flush()
    # no close(): what a killed process leaves
    assert path.stat().st_size == 800
    assert path.read_bytes()[5 * ENTRY_SIZE :] == bytes(800 - 5 * ENTRY_SIZE)

    loaded = OffsetIndex(path, 0, max_bytes=800)
    assert loaded.entries == 5
    assert loaded.entries_array().tolist() == [[i * 10, i * 4096] for i in range(1, 6)]
    assert loaded.sane(log_size=5 * 4096 + 1)
    # the next append goes right after the valid prefix, not after the padding
    loaded.append(60, 6 * 4096)
    loaded.close()
    assert path.stat().st_size == 6 * ENTRY_SIZE
    idx.close()


def test_entries_that_stop_increasing_end_the_index(tmp_path: Path) -> None:
    path = tmp_path / "b.index"
    pairs = [(1, 100), (2, 200), (3, 150), (4, 400)]  # third position goes backwards
    path.write_bytes(b"".join(struct.pack(">II", *p) for p in pairs))
    idx = OffsetIndex(path, 0)
    assert idx.entries == 2
    assert idx.lookup(100) == (2, 200)


def test_all_zero_file_has_no_entries(tmp_path: Path) -> None:
    path = tmp_path / "z.index"
    path.write_bytes(bytes(64))
    idx = OffsetIndex(path, 5)
    assert idx.entries == 0
    assert idx.lookup(50) == (5, 0)
    assert idx.sane(log_size=0)


@pytest.mark.parametrize("extra", [1, 3, 7])
def test_misaligned_file_is_insane(tmp_path: Path, extra: int) -> None:
    path = tmp_path / "m.index"
    path.write_bytes(struct.pack(">II", 1, 100) + b"\x01" * extra)
    idx = OffsetIndex(path, 0)
    assert not idx.sane(log_size=1 << 20)
    idx.reset()  # a rebuild starts from a clean slate
    assert idx.sane(log_size=1 << 20)
    assert idx.entries == 0


def test_aligned_file_is_sane(tmp_path: Path) -> None:
    path = tmp_path / "ok.index"
    path.write_bytes(struct.pack(">II", 1, 100))
    assert OffsetIndex(path, 0).sane(log_size=101)


def test_truncate_to_position(tmp_path: Path) -> None:
    path = tmp_path / "t.index"
    idx = OffsetIndex(path, 0, max_bytes=1024)
    for i in range(1, 9):
        idx.append(i * 5, i * 1000)
    idx.truncate_to_position(4500)  # entries at 1000..4000 stay; 5000.. pointed past the cut
    assert idx.entries_array().tolist() == [[i * 5, i * 1000] for i in range(1, 5)]
    assert idx.lookup(1000) == (20, 4000)
    idx.truncate_to_position(3000)  # an entry exactly at the cut goes too
    assert idx.entries_array().tolist() == [[5, 1000], [10, 2000]]
    idx.truncate_to_position(10_000)  # beyond the last entry: nothing changes
    assert idx.entries == 2
    # the dropped slots are zeroed, so a crash now cannot resurrect them
    idx.flush()
    assert OffsetIndex(path, 0, max_bytes=1024).entries == 2
    idx.append(11, 2500)
    idx.close()
    assert np.array_equal(OffsetIndex(path, 0).entries_array(), np.array([[5, 1000], [10, 2000], [11, 2500]]))


def test_delete_removes_file(tmp_path: Path) -> None:
    path = tmp_path / "d.index"
    idx = OffsetIndex(path, 0)
    idx.append(1, 10)
    assert path.exists()
    idx.delete()
    assert not path.exists()
    idx.delete()  # idempotent


def test_offset_from_a_position(tmp_path: Path) -> None:
    """The first indexed offset at or after a byte position: what bounds a fetch's aborted list."""
    idx = OffsetIndex(tmp_path / "x.index", 100, new=True)
    assert idx.offset_from(0) is None
    for offset, position in ((110, 4000), (125, 8100), (140, 12500)):
        idx.append(offset, position)
    assert [idx.offset_from(p) for p in (0, 4000, 4001, 8100, 12499, 12500, 12501)] == [
        110,
        110,
        125,
        125,
        140,
        140,
        None,
    ]
    idx.close()


def _vm_flags(path: Path) -> list[str]:
    """The kernel's flags of this process's mapping of ``path`` (from /proc/self/smaps)."""
    lines = Path("/proc/self/smaps").read_text().splitlines()
    for i, line in enumerate(lines):
        if line.endswith(str(path)):
            for rest in lines[i + 1 :]:
                if rest.startswith("VmFlags:"):
                    return rest.split()[1:]
    raise AssertionError(f"{path} is not mapped")


def test_the_map_is_advised_random_so_the_first_entry_reads_no_pages_ahead(tmp_path: Path) -> None:
    """The first entry of a fresh index faults on a hole: with readahead it zeroed a run of pages,
    milliseconds of the event loop per new index; the map is advised MADV_RANDOM (``rr``)."""
    path = tmp_path / "00000000000000001000.index"
    index = OffsetIndex(path, BASE, new=True)
    index.append(BASE + 3, 4100)
    try:
        flags = _vm_flags(path)
        assert "rr" in flags and "sh" in flags  # random read advised, shared (written through)
    finally:
        index.close()
    assert path.read_bytes() == struct.pack(">II", 3, 4100)  # the entry reached the file, trimmed
