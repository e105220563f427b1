"""Crash loop for the log cleaner: the broker killed with SIGKILL while it compacts, again and
again, keeps the latest value of every key and a consistent log.

One data directory lives through every iteration.  The broker runs with small segments
and a cleaner that never rests (every topic compacted, ``log.cleaner.backoff.ms=1``), a
producer writes key updates as fast as it can, and once a cleaning has been logged the
broker is killed at a random moment (a bounded wait on that log line, then a random
extra delay: the only sleep is the kill timing itself).

After each kill the broker is started once with its cleaner off, which finishes or rolls
back an interrupted swap at load, and checked: offsets only increase; every key holds a
value at least as new as the last one acknowledged for it, and each value sits at the
offset it was acknowledged at; the segment files do not overlap and no cleaning file is
left over.

``HMB_COMPACTION_CRASH_ITERATIONS`` sets the number of iterations (5 by default; the
benchmark runs 50: ``python -m bench compaction-crash``).
"""

from __future__ import annotations

import os
import random
import time
from pathlib import Path

from broker_process import BrokerProcess
from durability import read_partition, segment_facts
from wire import WireClient

from kproto import ApiKey, ErrorCode
from kproto.records import RecordBatchBuilder

ITERATIONS = int(os.environ.get("HMB_COMPACTION_CRASH_ITERATIONS", "5"))
TOPIC = "changelog"
KEYS = 50
SETTINGS = (
    "log.cleanup.policy=compact",
    "log.segment.bytes=4096",
    "log.cleaner.backoff.ms=1",
    "log.cleaner.min.cleanable.ratio=0.1",
)
CLEANING_FILES = (".cleaned", ".swap", ".clean-plan")


def _value(key: int, seq: int) -> bytes:
    return b"key=%03d seq=%09d|" % (key, seq) + bytes(seq % 37)


def _seq(value: bytes) -> int:
    return int(value[12:21])


def _produce(c: WireClient, key: int, seq: int) -> int:
    b = RecordBatchBuilder()
    b.append(b"k%03d" % key, _value(key, seq))
    body = {
        "transactional_id": None,
        "acks": 1,
        "timeout_ms": 1000,
        "topic_data": [{"name": TOPIC, "partition_data": [{"index": 0, "records": b.build()}]}],
    }
    part = c.request(ApiKey.PRODUCE, 3, body).responses[0].partition_responses[0]
    assert part.error_code == ErrorCode.NONE, part
    return int(part.base_offset)


def _create(c: WireClient) -> None:
    body = {
        "topics": [{"name": TOPIC}],
        "allow_auto_topic_creation": True,
        "include_cluster_authorized_operations": False,
        "include_topic_authorized_operations": False,
    }
    c.request(ApiKey.METADATA, 8, body)


def _check(broker: BrokerProcess, acked: dict[int, tuple[int, int]], data: Path) -> int:
    """Everything the cleaner must keep is there; returns the high watermark."""
    with WireClient(broker.bootstrap) as c:
        records, hw = read_partition(c, TOPIC, 0)
    offsets = [r.offset for r in records]
    assert offsets == sorted(set(offsets)), "an offset twice or out of order"
    newest: dict[int, tuple[int, int]] = {}
    for r in records:
        assert r.key is not None and r.value is not None
        newest[int(r.key[1:])] = (_seq(r.value), r.offset)
    for key, (seq, offset) in acked.items():
        assert key in newest, f"key {key} lost (acknowledged seq {seq} at {offset})"
        got_seq, got_offset = newest[key]
        assert got_seq >= seq, f"key {key}: seq {got_seq} at {got_offset}, acknowledged {seq} at {offset}"
        if got_seq == seq:
            assert got_offset == offset
    directory = data / f"{TOPIC}-0"
    assert not [n for n in os.listdir(directory) if n.endswith(CLEANING_FILES)]
    last = -1
    for path in sorted(directory.glob("*.log")):
        facts = segment_facts(path)
        assert facts.bad is None, (path.name, facts.bad)
        if facts.entries:
            assert facts.entries[0].last_offset > last, f"{path.name} overlaps the segment before it"
            last = facts.entries[-1].last_offset
    return hw


def _check_stopped_cleaner(data: Path, acked: dict[int, tuple[int, int]]) -> int:
    """Restart after the kill with the cleaner off (its files are then the crash's only) and check."""
    broker = BrokerProcess(data, *SETTINGS, "log.cleaner.enable=false").start()
    try:
        return _check(broker, acked, data)
    finally:
        broker.kill()


def test_kill_during_cleaning_keeps_the_latest_value_per_key(tmp_path: Path) -> None:
    data = tmp_path / "data"
    rng = random.Random(22)
    acked: dict[int, tuple[int, int]] = {}  # key -> (seq, offset) last acknowledged
    seq = 0
    cleanings = 0
    interrupted = 0  # kills that left cleaning files behind: a swap to finish or roll back
    for _iteration in range(ITERATIONS):
        directory = data / f"{TOPIC}-0"
        if directory.exists() and any(n.endswith(CLEANING_FILES) for n in os.listdir(directory)):
            interrupted += 1
        if acked:
            _check_stopped_cleaner(data, acked)
        broker = BrokerProcess(data, *SETTINGS).start()
        try:
            with WireClient(broker.bootstrap) as c:
                _create(c)
                since = len(broker.lines)
                deadline = time.monotonic() + 60
                kill_at: float | None = None
                try:
                    while True:
                        if kill_at is None and any("cleaned log" in line for line in broker.lines[since:]):
                            kill_at = time.monotonic() + rng.uniform(0, 0.3)
                        if kill_at is not None and time.monotonic() >= kill_at:
                            broker.kill()  # SIGKILL, mid-stream and (very likely) mid-cleaning
                            break
                        assert time.monotonic() < deadline, "no cleaning within a minute"
                        key = rng.randrange(KEYS)
                        acked[key] = (seq, _produce(c, key, seq))
                        seq += 1
                except (OSError, EOFError, ConnectionError):
                    pass
            cleanings += sum("cleaned log" in line for line in broker.lines)
        finally:
            broker.kill()
    hw = _check_stopped_cleaner(data, acked)
    assert cleanings >= ITERATIONS, cleanings
    assert hw > max(offset for _seq, offset in acked.values())
    print(f"{ITERATIONS} kills, {interrupted} in the middle of a cleaning's file work, {cleanings} cleanings")
