"""Helpers shared by the durability tests: reading a partition back over the wire, and an
offline checker of a partition directory's files.

The offline checker is independent of :class:`hmb.log.index.OffsetIndex`: it reads the
``.index`` file itself (big-endian ``relative offset u32, position u32`` pairs, the
well-formed prefix of a possibly preallocated file) and walks the ``.log`` with
:func:`hmb.log.scan.iter_entries`.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wire import WireClient

from hmb.log.scan import BadEntry, Entry, iter_entries
from kproto import ApiKey, ErrorCode
from kproto.records import read_records


def fetch_body_v11(
    topic: str, partition: int, offset: int, partition_max_bytes: int = 1 << 20
) -> dict[str, Any]:
    return {
        "replica_id": -1,
        "max_wait_ms": 0,
        "min_bytes": 0,
        "max_bytes": 64 << 20,
        "isolation_level": 0,
        "session_id": 0,
        "session_epoch": -1,
        "topics": [
            {
                "topic": topic,
                "partitions": [
                    {
                        "partition": partition,
                        "current_leader_epoch": -1,
                        "fetch_offset": offset,
                        "log_start_offset": -1,
                        "partition_max_bytes": partition_max_bytes,
                    }
                ],
            }
        ],
        "forgotten_topics_data": [],
        "rack_id": "",
    }


def fetch_v11(c: WireClient, topic: str, partition: int, offset: int, max_bytes: int = 1 << 20) -> Any:
    resp = c.request(ApiKey.FETCH, 11, fetch_body_v11(topic, partition, offset, max_bytes))
    part = resp.responses[0].partitions[0]
    assert part.error_code == ErrorCode.NONE, (topic, partition, offset, part.error_code)
    return part


def read_partition(c: WireClient, topic: str, partition: int, start: int = 0) -> tuple[list[Any], int]:
    """Every record of a partition from ``start`` to its high watermark, and that watermark."""
    out: list[Any] = []
    offset = start
    while True:
        part = fetch_v11(c, topic, partition, offset)
        hw = int(part.high_watermark)
        if offset >= hw:
            return out, hw
        got = [r for r in read_records(part.records or b"") if r.offset >= offset]
        assert got, f"no progress reading {topic}-{partition} at {offset} (high watermark {hw})"
        out += got
        offset = got[-1].offset + 1


@dataclass(frozen=True)
class SegmentFacts:
    base_offset: int
    entries: list[Entry]
    bad: BadEntry | None
    size: int
    index: list[tuple[int, int]]


def index_pairs(path: Path) -> list[tuple[int, int]]:
    """The well-formed prefix of an index file: positions > 0, keys and positions increasing."""
    raw = path.read_bytes() if path.exists() else b""
    out: list[tuple[int, int]] = []
    for i in range(len(raw) // 8):
        rel, pos = struct.unpack_from(">II", raw, i * 8)
        if pos == 0 or (out and (rel <= out[-1][0] or pos <= out[-1][1])):
            break
        out.append((rel, pos))
    return out


def segment_facts(log_path: Path) -> SegmentFacts:
    fd = os.open(log_path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        items = list(iter_entries(fd, 0, size))
    finally:
        os.close(fd)
    entries = [e for e in items if isinstance(e, Entry)]
    bad = items[-1] if items and isinstance(items[-1], BadEntry) else None
    return SegmentFacts(int(log_path.stem), entries, bad, size, index_pairs(log_path.with_suffix(".index")))


def check_partition_files(directory: Path, *, allow_torn_tail: bool) -> int:
    """Check a partition directory offline; returns the log end offset the files hold.

    Every segment is a sequence of valid entries (only the last one may end in a torn
    write, and only when ``allow_torn_tail``), offsets are dense across segments, and
    every index entry points at the start of an entry whose last offset is the entry's
    key.
    """
    logs = sorted(directory.glob("*.log"))
    assert logs, f"no segments in {directory}"
    next_offset = int(logs[0].stem)
    for i, path in enumerate(logs):
        facts = segment_facts(path)
        assert facts.base_offset == next_offset, (path.name, next_offset)
        if facts.bad is not None:
            assert allow_torn_tail and i == len(logs) - 1, (path.name, facts.bad)
        with open(path, "rb") as f:
            for e in facts.entries:
                if e.magic >= 2:  # a batch's base offset continues the log exactly
                    f.seek(e.position)
                    assert struct.unpack(">q", f.read(8))[0] == next_offset, (path.name, e, next_offset)
                assert e.last_offset >= next_offset, (path.name, e)
                next_offset = e.last_offset + 1
        starts = {e.position: e.last_offset for e in facts.entries}
        for rel, pos in facts.index:
            assert starts.get(pos) == facts.base_offset + rel, (path.name, rel, pos)
    return next_offset
