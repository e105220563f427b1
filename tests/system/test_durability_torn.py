"""Torn and corrupt segment tails under the real broker process.

Every kind of damage a crash or a bad disk leaves at the end of a partition — a write
torn inside a batch header or its payload, a flipped CRC byte, garbage or a
zero-filled (preallocated) tail, an index entry pointing past the end of the log or
inside an entry, an index torn mid-entry or missing — for MessageSet magic 0 and
RecordBatch magic 2 data, after a kill -9 and after a clean stop.  The broker starts, says in its log what it
repaired, serves every entry before the damage byte-identical to what was on disk, and
producing continues at the right next offset.

One broker per stop mode holds one topic per (damage, magic) case, so the whole table
costs two restarts.  :mod:`test_log_recovery` already covers the same damages in-process
(magic 0, both stop modes, the rebuilt index entry by entry, plausible garbage, an older
segment's index); this file adds magic 2, the real process, its log lines and the wire.
"""

from __future__ import annotations

import os
import re
import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from broker_process import BrokerProcess
from durability import fetch_v11, index_pairs, segment_facts
from wire import WireClient

from kproto import ApiKey, ErrorCode
from kproto.records import RecordBatchBuilder, build_message_set, read_records
from kproto.records.entry import ENTRY_HEAD as HEADER
from kproto.records.entry import last_offset as entry_last_offset

N = 120  # requests per topic: two or three segments, the last with several index entries
OVERRIDES = ("log.segment.bytes=4096", "log.index.interval.bytes=128")


def _values(i: int, magic: int) -> list[bytes]:
    count = 1 if magic == 0 else 1 + i % 3
    return [b"v%d-%04d-%d|" % (magic, i, k) + bytes((i + k) % 50) for k in range(count)]


def _records(i: int, magic: int) -> bytes:
    if magic == 0:
        return build_message_set([(b"k%d" % i, v) for v in _values(i, 0)])
    b = RecordBatchBuilder()
    for k, v in enumerate(_values(i, 2)):
        b.append(b"k%d" % i, v, 1_700_000_000_000 + i, [("h", b"%d" % k)])
    return b.build()


def _produce(c: WireClient, topic: str, records: bytes, magic: int) -> Any:
    version = 0 if magic == 0 else 8
    body: dict[str, Any] = {
        "acks": 1,
        "timeout_ms": 1000,
        "topic_data": [{"name": topic, "partition_data": [{"index": 0, "records": records}]}],
    }
    if version >= 3:
        body["transactional_id"] = None
    part = c.request(ApiKey.PRODUCE, version, body).responses[0].partition_responses[0]
    assert part.error_code == ErrorCode.NONE
    return part


def _served_entries(c: WireClient, topic: str) -> list[bytes]:
    """Every whole entry the broker serves from offset 0, as raw bytes."""
    out: list[bytes] = []
    offset = 0
    while True:
        part = fetch_v11(c, topic, 0, offset)
        data = bytes(part.records or b"")
        pos, got = 0, []
        while pos + 12 <= len(data):
            size = HEADER.unpack_from(data, pos)[1]
            if pos + 12 + size > len(data):
                break
            got.append(data[pos : pos + 12 + size])
            pos += 12 + size
        if not got:
            assert offset == part.high_watermark, (topic, offset, part.high_watermark)
            return out
        out += got
        offset = entry_last_offset(got[-1]) + 1


def _disk_entries(directory: Path) -> list[bytes]:
    out = []
    for log in sorted(directory.glob("*.log")):
        raw = log.read_bytes()
        out += [raw[e.position : e.position + e.size] for e in segment_facts(log).entries]
    return out


# --------------------------------------------------------------------------- damages
# Each damages a partition directory and returns (entries of the last segment lost, the
# text the broker's log must say about that partition).


def _last_segment(directory: Path) -> Path:
    return sorted(directory.glob("*.log"))[-1]


def mid_header(d: Path, magic: int) -> tuple[int, str]:
    log = _last_segment(d)
    last = segment_facts(log).entries[-1]
    os.truncate(log, last.position + 7)
    return 1, r"truncated 7 bytes \(torn header \(7 bytes left\)\)"


def mid_payload(d: Path, magic: int) -> tuple[int, str]:
    log = _last_segment(d)
    last = segment_facts(log).entries[-1]
    os.truncate(log, last.position + last.size - 5)
    return 1, rf"\(torn entry: {last.size} bytes announced, {last.size - 5} present\)"


def crc_byte(d: Path, magic: int) -> tuple[int, str]:
    log = _last_segment(d)
    last = segment_facts(log).entries[-1]
    at = last.position + (12 if magic < 2 else 17) + 2  # inside the CRC field itself
    with open(log, "r+b") as f:
        f.seek(at)
        byte = f.read(1)[0]
        f.seek(at)
        f.write(bytes([byte ^ 0x10]))
    return 1, r"\(CRC mismatch\)" if magic < 2 else r"\(CRC-32C mismatch\)"


def garbage(d: Path, magic: int) -> tuple[int, str]:
    with open(_last_segment(d), "ab") as f:
        f.write(b"\xde\xad\xbe\xef" * 9)
    return 0, r"truncated 36 bytes \(impossible entry size"


def zero_tail(d: Path, magic: int) -> tuple[int, str]:
    with open(_last_segment(d), "ab") as f:
        f.write(bytes(4096))  # extended (preallocated) but never written
    return 0, r"truncated 4096 bytes \(entry size 0 too small\)"


def index_past_end(d: Path, magic: int) -> tuple[int, str]:
    log = _last_segment(d)
    index = log.with_suffix(".index")
    pairs = index_pairs(index)
    with open(index, "r+b") as f:
        f.seek(len(pairs) * 8)
        f.write(struct.pack(">II", pairs[-1][0] + 50, log.stat().st_size + 100))
    return 0, r"index rebuilt \(index entry points past the end of the log\)"


def index_mid_entry(d: Path, magic: int) -> tuple[int, str]:
    index = _last_segment(d).with_suffix(".index")
    os.truncate(index, len(index_pairs(index)) * 8 - 3)
    return 0, r"index rebuilt \(index file size not a multiple of 8"


def index_off_boundary(d: Path, magic: int) -> tuple[int, str]:
    """The last entry points inside the log, but not at the start of an entry."""
    index = _last_segment(d).with_suffix(".index")
    pairs = index_pairs(index)
    with open(index, "r+b") as f:
        f.seek((len(pairs) - 1) * 8)
        f.write(struct.pack(">II", pairs[-1][0], pairs[-1][1] + 3))
    return 0, r"index rebuilt \(\d+ index entries did not match the log"


def index_missing(d: Path, magic: int) -> tuple[int, str]:
    _last_segment(d).with_suffix(".index").unlink()
    return 0, r"index rebuilt \(index file missing\)"


Damage = Callable[[Path, int], tuple[int, str]]
DAMAGES: list[Damage] = [
    mid_header,
    mid_payload,
    crc_byte,
    garbage,
    zero_tail,
    index_past_end,
    index_mid_entry,
    index_off_boundary,
    index_missing,
]
CASES = [(damage, magic) for damage in DAMAGES for magic in (0, 2)]


def _topic(damage: Damage, magic: int) -> str:
    return f"torn-{damage.__name__.replace('_', '-')}-m{magic}"


@dataclass
class Case:
    before: list[bytes]  # every entry on disk before the damage
    lost: int  # entries of the end the damage costs
    pattern: str
    next_request: int  # how many produce requests the topic had


@dataclass
class Damaged:
    broker: BrokerProcess
    cases: dict[str, Case]
    restart_log: str


@pytest.fixture(scope="module", params=["kill-9", "clean-stop"])
def damaged(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Damaged]:
    data = tmp_path_factory.mktemp("torn") / "data"
    with BrokerProcess(data, *OVERRIDES) as broker:
        with WireClient(broker.bootstrap) as c:
            for damage, magic in CASES:
                topic = _topic(damage, magic)
                c.request(ApiKey.METADATA, 0, {"topics": [{"name": topic}]})
                for i in range(N):
                    _produce(c, topic, _records(i, magic), magic)
        if request.param == "kill-9":
            broker.kill()
        else:
            assert broker.stop() == 0
        cases = {}
        for damage, magic in CASES:
            topic = _topic(damage, magic)
            directory = data / f"{topic}-0"
            assert len(list(directory.glob("*.log"))) >= 2
            assert len(index_pairs(_last_segment(directory).with_suffix(".index"))) >= 3
            before = _disk_entries(directory)
            lost, pattern = damage(directory, magic)
            cases[topic] = Case(before, lost, pattern, N)
        lines = len(broker.lines)
        broker.restart()
        # after a clean stop the partitions' files are read in the background: wait for all
        broker.wait_for_log(r"loaded \d+ topics.*unclean|read the files of \d+ partitions")
        yield Damaged(broker, cases, "".join(broker.lines[lines:]))


@pytest.mark.parametrize(("damage", "magic"), CASES, ids=[_topic(d, m) for d, m in CASES])
def test_broker_repairs_and_serves_everything_before_the_damage(
    damaged: Damaged, damage: Damage, magic: int
) -> None:
    topic = _topic(damage, magic)
    case = damaged.cases[topic]
    # the log says what was repaired, for this partition
    said = [line for line in damaged.restart_log.splitlines() if f"recovered {topic}-0 " in line]
    assert said and any(re.search(case.pattern, line) for line in said), (case.pattern, said)
    kept = case.before[: len(case.before) - case.lost]
    with WireClient(damaged.broker.bootstrap) as c:
        served = _served_entries(c, topic)
        assert served == kept  # byte-identical, nothing more
        next_offset = entry_last_offset(kept[-1]) + 1
        assert fetch_v11(c, topic, 0, 0).high_watermark == next_offset
        # the records themselves, decoded
        values = [r.value for r in read_records(b"".join(served))]
        expected = [v for i in range(N) for v in _values(i, magic)]
        assert values == expected[: len(values)] and len(values) == next_offset
        # producing continues at the right next offset
        part = _produce(c, topic, _records(N, magic), magic)
        assert part.base_offset == next_offset
        again = _served_entries(c, topic)
        assert again[: len(kept)] == kept and len(again) == len(kept) + 1
        assert [r.value for r in read_records(again[-1])] == _values(N, magic)
