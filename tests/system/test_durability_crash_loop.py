"""Crash loop: the broker killed with SIGKILL mid-stream, again and again, never loses or
corrupts what it acknowledged.

One data directory lives through every iteration.  Each iteration restarts the broker,
checks everything acknowledged so far, commits a consumer-group offset, lets a real
client (librdkafka, default settings, acks=1) produce as fast as it can, and kills the
broker at a random moment once some messages are acknowledged (a bounded wait on that
condition, then a random extra delay: the only sleep is the kill timing itself).

After each restart: every acknowledged ``(sequence, offset)`` is present exactly once at
its acknowledged offset and in sequence order; offsets are dense from 0 to the high
watermark; what an earlier iteration read is unchanged (no offset reused); fetches at
random acknowledged offsets land on exactly that record (the index works); the files
check offline (every index entry points at an entry boundary holding its offset); the
group's committed offsets are the last ones committed.

With ``log.flush.interval.messages=1`` (fsync before every acknowledgement) the same
holds after a simulated power loss: the kill is followed by cutting the active
segment anywhere between the end of the last acknowledged batch and its size, and by
damaging the index tail.
"""

from __future__ import annotations

import os
import random
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from broker_process import BrokerProcess
from durability import check_partition_files, fetch_v11, read_partition, segment_facts
from wire import WireClient

from kproto.records import read_records

ck = pytest.importorskip("confluent_kafka")

PARTITIONS = 2
QUIET = {"log_level": 0}  # the producer's complaints about the killed broker are expected


def _value(seq: int) -> bytes:
    return b"seq=%010d|" % seq + bytes(seq % 61)


def _seq(value: bytes | None) -> int:
    assert value is not None and value[:4] == b"seq=", value
    return int(value[4:14])


@dataclass
class Acked:
    """What the producers were told: partition -> offset -> sequence, in acknowledgement order."""

    by_offset: list[dict[int, int]] = field(default_factory=lambda: [{} for _ in range(PARTITIONS)])
    count: int = 0

    def add(self, seq: int, partition: int, offset: int) -> None:
        previous = self.by_offset[partition].setdefault(offset, seq)
        assert previous == seq, (
            f"offset {offset} of partition {partition} acknowledged twice ({previous}, {seq})"
        )
        self.count += 1


class Producer(threading.Thread):
    """librdkafka producing sequence-numbered values at full speed until stopped."""

    def __init__(
        self, bootstrap: str, topic: str, first_seq: int, acked: Acked, *, total: int, window: int
    ) -> None:
        super().__init__(daemon=True)
        self.topic = topic
        self.seq = first_seq
        self.end = first_seq + total  # a small count per iteration keeps 50 iterations quick
        self.window = window  # at most this many unacknowledged: many small requests, not one big one
        self.delivered = 0
        self.acked = acked
        self.new_acks = 0
        self.cond = threading.Condition()
        self.halt = threading.Event()
        self.conf = {"bootstrap.servers": bootstrap, "acks": 1, **QUIET}
        self.failure: BaseException | None = None

    def _delivered(self, err: Any, msg: Any) -> None:
        self.delivered += 1
        if err is not None:
            return  # not acknowledged: may or may not be in the log
        with self.cond:
            self.acked.add(_seq(msg.value()), msg.partition(), msg.offset())
            self.new_acks += 1
            self.cond.notify_all()

    def run(self) -> None:
        try:
            p = ck.Producer(self.conf)
            produced = 0
            while not self.halt.is_set():
                if self.seq >= self.end or produced - self.delivered >= self.window:
                    p.poll(0.001)  # wait for delivery reports (or the kill)
                    continue
                try:
                    p.produce(
                        self.topic,
                        _value(self.seq),
                        partition=self.seq % PARTITIONS,
                        on_delivery=self._delivered,
                    )
                except BufferError:  # pragma: no cover - the window is far below the queue size
                    p.poll(0.001)
                    continue
                self.seq += 1
                produced += 1
                if produced % 64 == 0:
                    p.poll(0)
            p.poll(0)  # acknowledgements already received are real acknowledgements
            p.purge()  # the rest (queued, or in flight to the dead broker) is unacknowledged
            p.flush(10)
        except BaseException as exc:  # pragma: no cover - reported by the test
            self.failure = exc

    def wait_for_acks(self, n: int, timeout: float) -> bool:
        with self.cond:
            return self.cond.wait_for(lambda: self.new_acks >= n, timeout)


class Verifier:
    """Checks the broker's partitions against everything acknowledged so far."""

    def __init__(self, topic: str, acked: Acked, rng: random.Random) -> None:
        self.topic = topic
        self.acked = acked
        self.rng = rng
        self.log_seqs: list[list[int]] = [[] for _ in range(PARTITIONS)]  # offset -> sequence, as read
        self.seq_counts: list[Counter[int]] = [Counter() for _ in range(PARTITIONS)]

    def check(self, c: WireClient, full: bool) -> list[int]:
        """Read (from 0 when ``full``, else from where the last check ended); returns the watermarks."""
        hws = []
        for p in range(PARTITIONS):
            known = self.log_seqs[p]
            start = 0 if full else len(known)
            records, hw = read_partition(c, self.topic, p, start)
            assert [r.offset for r in records] == list(range(start, hw)), (
                f"offsets of partition {p} not dense"
            )
            seqs = [_seq(r.value) for r in records]
            if full:
                # nothing read before changed: no acknowledged or visible offset was reused
                assert seqs[: len(known)] == known, f"partition {p} changed below offset {len(known)}"
                self.log_seqs[p] = seqs
                self.seq_counts[p] = Counter(seqs)
            else:
                known += seqs
                self.seq_counts[p].update(seqs)
            log_seqs = self.log_seqs[p]
            acked = self.acked.by_offset[p]
            assert not acked or max(acked) < hw, f"partition {p}: acknowledged offset {max(acked)} >= hw {hw}"
            wrong = [(o, s, log_seqs[o]) for o, s in acked.items() if log_seqs[o] != s]
            assert not wrong, f"partition {p}: acknowledged (offset, seq, found) wrong: {wrong[:5]}"
            twice = [s for s in acked.values() if self.seq_counts[p][s] != 1]
            assert not twice, f"partition {p}: acknowledged sequences not exactly once: {twice[:5]}"
            in_order = [acked[o] for o in sorted(acked)]
            assert in_order == sorted(in_order), f"partition {p}: acknowledged messages out of order"
            self._probe(c, p)
            hws.append(hw)
        return hws

    def _probe(self, c: WireClient, p: int, n: int = 8) -> None:
        """Fetches at random acknowledged offsets find exactly that record: the index leads there."""
        acked = self.acked.by_offset[p]
        for offset in self.rng.sample(sorted(acked), min(n, len(acked))):
            part = fetch_v11(c, self.topic, p, offset, max_bytes=1)  # at least one whole batch
            match = [r for r in read_records(part.records or b"") if r.offset == offset]
            assert len(match) == 1 and _seq(match[0].value) == acked[offset], (p, offset)


def _commit(
    bootstrap: str, group: str, topic: str, expect: dict[int, int] | None, new: dict[int, int]
) -> None:
    """Check the group's committed offsets are ``expect``, then commit ``new`` (librdkafka)."""
    c = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False, **QUIET})
    try:
        tps = [ck.TopicPartition(topic, p) for p in range(PARTITIONS)]
        if expect is not None:
            got = {tp.partition: tp.offset for tp in c.committed(tps, timeout=10)}
            assert got == expect, f"committed offsets {got}, expected {expect}"
        c.commit(offsets=[ck.TopicPartition(topic, p, o) for p, o in new.items()], asynchronous=False)
    finally:
        c.close()


def _active_sizes(data: Path, topic: str) -> list[tuple[Path, int]]:
    """Each partition's active segment and its size: at a restart, what recovery fsync'd."""
    logs = [sorted((data / f"{topic}-{p}").glob("*.log"))[-1] for p in range(PARTITIONS)]
    return [(log, log.stat().st_size) for log in logs]


def _power_loss(
    data: Path, topic: str, acked: Acked, synced_at_start: list[tuple[Path, int]], rng: random.Random
) -> None:
    """Lose whatever was not fsync'd: cut each partition's active segment at a random point
    at or after the end of its last acknowledged batch (fsync'd before the acknowledgement)
    and of what recovery fsync'd at the last start; damage the index tail."""
    for p in range(PARTITIONS):
        directory = data / f"{topic}-{p}"
        log = sorted(directory.glob("*.log"))[-1]
        facts = segment_facts(log)
        last_acked = max(acked.by_offset[p], default=-1)
        durable_end = synced_at_start[p][1] if synced_at_start[p][0] == log else 0
        for e in facts.entries:
            if e.last_offset > last_acked and e.position >= durable_end:
                break
            durable_end = max(durable_end, e.position + e.size)
        cut = rng.randint(durable_end, facts.size)
        os.truncate(log, cut)
        index = log.with_suffix(".index")
        kind = rng.choice(["keep", "cut-entries", "mid-entry", "zero-tail"])
        if not index.exists():  # killed between creating a new segment's .log and its .index
            continue
        entries = len(facts.index)
        keep = rng.randint(0, entries)
        if kind == "cut-entries":
            os.truncate(index, keep * 8)
        elif kind == "mid-entry":
            os.truncate(index, keep * 8 + rng.randint(1, 7))
        elif kind == "zero-tail":
            with open(index, "r+b") as f:
                f.seek(keep * 8)
                f.write(bytes((entries - keep) * 8))


def _crash_loop(
    tmp_path: Path, iterations: int, overrides: tuple[str, ...], power_loss: bool, seed: int
) -> None:
    rng = random.Random(seed)
    topic, group = "crash-loop", "crash-loop-group"
    data = tmp_path / "data"
    broker = BrokerProcess(data, f"num.partitions={PARTITIONS}", *overrides)
    acked = Acked()
    verifier = Verifier(topic, acked, rng)
    committed: dict[int, int] | None = None
    seq = 0
    restarts = []
    try:
        for i in range(iterations + 1):
            started = time.monotonic()
            broker.start()
            restarts.append(time.monotonic() - started)
            with WireClient(broker.bootstrap) as c:
                c.request(3, 1, {"topics": [{"name": topic}]})  # auto-creates the topic on the first pass
                hws = verifier.check(c, full=i % 10 == 0 or i == iterations)
            for p in range(PARTITIONS):
                check_partition_files(data / f"{topic}-{p}", allow_torn_tail=False)
            synced_at_start = _active_sizes(data, topic)
            new = {p: hw // 2 + i for p, hw in enumerate(hws)}
            _commit(broker.bootstrap, group, topic, committed, new)
            committed = new
            if i == iterations:
                break

            total, window = rng.randint(1000, 4000), rng.choice([64, 256, 1024])
            producer = Producer(broker.bootstrap, topic, seq, acked, total=total, window=window)
            producer.start()
            # some acknowledged (a bounded wait), then the random moment of the crash
            assert producer.wait_for_acks(rng.randint(1, total // 2), timeout=30), "no acknowledgements"
            time.sleep(rng.uniform(0, 0.02))
            broker.kill()
            producer.halt.set()
            producer.join(30)
            assert not producer.is_alive() and producer.failure is None, producer.failure
            seq = producer.seq
            for p in range(PARTITIONS):
                check_partition_files(data / f"{topic}-{p}", allow_torn_tail=True)
            if power_loss:
                _power_loss(data, topic, acked, synced_at_start, rng)
        # a clean stop after all that leaves a log that loads without any repair
        lines = len(broker.lines)
        assert broker.stop() == 0
        broker.start()
        assert not any("recovered" in line for line in broker.lines[lines:]), broker.lines[lines:]
        with WireClient(broker.bootstrap) as c:
            verifier.check(c, full=True)
    finally:
        broker.kill()
    assert acked.count > iterations * 50
    print(
        f"{iterations} crashes, {acked.count} acknowledged of {seq} produced, "
        f"restart {sum(restarts) / len(restarts):.2f}s on average"
    )


def test_kill_9_crash_loop(tmp_path: Path) -> None:
    """50 kills mid-stream: small segments and a dense index so that rolls and index
    entries happen throughout."""
    _crash_loop(
        tmp_path,
        50,
        ("log.segment.bytes=131072", "log.index.interval.bytes=1024"),
        power_loss=False,
        seed=20240501,
    )


def test_power_loss_with_fsync_per_message(tmp_path: Path) -> None:
    """log.flush.interval.messages=1: every acknowledged message was fsync'd first, so
    losing everything not fsync'd (simulated after the kill) loses nothing acknowledged."""
    _crash_loop(
        tmp_path,
        12,
        ("log.flush.interval.messages=1", "log.segment.bytes=65536", "log.index.interval.bytes=1024"),
        power_loss=True,
        seed=7,
    )


def test_fsync_per_message_happens_before_the_acknowledgement(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the power-loss test assumes, checked directly: with log.flush.interval.messages=1
    an append returns (and Produce answers) only after the segment holding it was fsync'd,
    and, for a new segment, its directory too (else the file's name could be lost)."""
    import stat

    import trio

    from hmb.log.config import LogConfig
    from hmb.log.manager import LogManager
    from kproto.records import build_message_set

    synced: list[tuple[str, int]] = []  # (path, size at the fsync)
    real_fsync = os.fsync

    def spy(fd: int) -> None:
        st = os.fstat(fd)
        path = os.readlink(f"/proc/self/fd/{fd}")
        synced.append((path + ("/" if stat.S_ISDIR(st.st_mode) else ""), st.st_size))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", spy)
    mgr = LogManager([tmp_path / "data"], LogConfig(flush_interval_messages=1, segment_bytes=1024))
    mgr.load()
    plog = mgr.create_topic("fsync", 1)[0]

    async def main() -> None:
        segments_seen = set()
        for i in range(60):
            synced.clear()
            await plog.append(build_message_set([(None, b"m%03d" % i + bytes(40))]))
            seg = plog.active
            assert (str(seg.log_path), seg.size) in synced, (i, synced)
            if seg.base_offset not in segments_seen:
                segments_seen.add(seg.base_offset)
                assert str(seg.directory) + "/" in [path for path, _size in synced], (i, synced)
        assert len(segments_seen) >= 3

    trio.run(main)
    mgr.close()
