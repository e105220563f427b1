"""The log cleaner's benchmark: a changelog restore, cleaner throughput, and produce beside it.

    python -m bench compaction                          # 1,000,000 updates over 10,000 keys
    python -m bench compaction --updates 100000 --keys 1000   # the size the test suite uses
    python -m bench compaction-crash [--iterations 50]  # the SIGKILL-while-cleaning loop

``compaction`` starts ``hmb serve`` (one cleaner thread, started by hand through the
control endpoint so that its work can be timed), and with librdkafka:

1. writes the updates to a compacted changelog topic (1 MiB segments);
2. produces to another topic for ``--window`` seconds with the cleaner idle: the
   peer figure;
3. produces to that topic again while the cleaner cleans the changelog (the
   control endpoint's ``clean_logs``, timed): the ratio of the two rates is the
   produce throughput kept while cleaning (goal >= 0.8);
4. restores the table from offset 0 and checks it against what was written.

Cleaner throughput is the broker's own figure (its cleaner log line: MB of log
read per second of cleaning, one core) beside the wall-clock one.  Results: a
Markdown summary on stdout and ``result.json`` in ``--out``.

``compaction-crash`` runs ``tests/system/test_compaction_crash_loop.py`` with
``HMB_COMPACTION_CRASH_ITERATIONS`` set (the test suite runs 5).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench.hmb_process import ROOT, BrokerProcess, free_port

TOPIC = "changelog"
LOAD = "load"
_CLEANED = re.compile(
    r"cleaned log changelog-0 .*?([\d.]+) MB of log processed in ([\d.]+) seconds \(([\d.]+) MB/sec\)"
)


def _control(address: str, op: str, args: dict[str, Any] | None = None, timeout_s: float = 3600) -> Any:
    from hmb_client.tools.control import control_call

    return control_call(address, op, args, timeout_s=timeout_s)


def _producer(bootstrap: str, **conf: Any) -> Any:
    import confluent_kafka

    return confluent_kafka.Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "log_level": 3, **conf})


def _write_changelog(bootstrap: str, updates: int, keys: int) -> tuple[dict[bytes, bytes], float]:
    rng = random.Random(22)
    table: dict[bytes, bytes] = {}
    p = _producer(bootstrap, **{"batch.size": 256 * 1024})
    started = time.monotonic()
    for i in range(updates):
        key = b"key-%06d" % rng.randrange(keys)
        value = b"%s update=%09d " % (key, i) + rng.randbytes(60)
        table[key] = value
        while True:
            try:
                p.produce(TOPIC, value, key, partition=0)
                break
            except BufferError:
                p.poll(0.01)
        p.poll(0)
    assert p.flush(600) == 0
    return table, time.monotonic() - started


class LoadProducer(threading.Thread):
    """librdkafka producing 100-byte records to the load topic until stopped; counts acks."""

    def __init__(self, bootstrap: str) -> None:
        super().__init__(daemon=True)
        self.producer = _producer(bootstrap, acks=1)
        self.acked = 0
        self.stop = threading.Event()

    def _delivered(self, err: Any, _msg: Any) -> None:
        if err is None:
            self.acked += 1

    def run(self) -> None:
        value = b"x" * 100
        while not self.stop.is_set():
            try:
                self.producer.produce(LOAD, value, partition=0, on_delivery=self._delivered)
            except BufferError:
                self.producer.poll(0.01)
            self.producer.poll(0)
        self.producer.flush(60)


def _rate_during(bootstrap: str, action: Any) -> tuple[float, float]:
    """(acked records per second while ``action`` runs, its duration)."""
    load = LoadProducer(bootstrap)
    load.start()
    time.sleep(1.0)  # warm-up: connections made, batches flowing (a benchmark, not a test)
    start_acked, started = load.acked, time.monotonic()
    action()
    elapsed = time.monotonic() - started
    rate = (load.acked - start_acked) / elapsed
    load.stop.set()
    load.join(60)
    return rate, elapsed


def _restore(bootstrap: str, high_watermark: int) -> tuple[dict[bytes, bytes], int, float]:
    import confluent_kafka

    c = confluent_kafka.Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "restore", "enable.auto.commit": False, "log_level": 3}
    )
    table: dict[bytes, bytes] = {}
    read = 0
    last = -1
    started = time.monotonic()
    try:
        c.assign([confluent_kafka.TopicPartition(TOPIC, 0, 0)])
        while last < high_watermark - 1:
            for m in c.consume(10_000, 1.0):
                if m.error():
                    raise RuntimeError(m.error())
                key, value, offset = m.key(), m.value(), m.offset()
                assert key is not None and value is not None and offset is not None
                table[key] = value
                read += 1
                last = offset
    finally:
        c.close()
    return table, read, time.monotonic() - started


def run(updates: int, keys: int, window_s: float, out: Path) -> dict[str, Any]:
    control = f"127.0.0.1:{free_port()}"
    with tempfile.TemporaryDirectory(prefix="hmb-compaction-") as tmp:
        settings = (f"control.listener={control}", "log.cleaner.enable=false")
        with BrokerProcess(Path(tmp) / "data", *settings) as broker:
            from confluent_kafka.admin import AdminClient, NewTopic

            admin = AdminClient({"bootstrap.servers": broker.bootstrap})
            config = {"cleanup.policy": "compact", "segment.bytes": str(1 << 20)}
            for f in admin.create_topics(
                [NewTopic(TOPIC, 1, 1, config=config), NewTopic(LOAD, 1, 1)]
            ).values():
                f.result(60)
            table, write_s = _write_changelog(broker.bootstrap, updates, keys)
            before = _control(control, "watermarks", {"topic": TOPIC})
            idle_rate, _ = _rate_during(broker.bootstrap, lambda: time.sleep(window_s))
            cleaned: list[int] = []
            busy_rate, clean_s = _rate_during(
                broker.bootstrap, lambda: cleaned.append(_control(control, "clean_logs"))
            )
            [state] = [s for s in _control(control, "cleaner") if s["topic"] == TOPIC]
            logged = [m for line in broker.lines if (m := _CLEANED.search(line))]
            restored, read, restore_s = _restore(broker.bootstrap, before["high_watermark"])
            assert restored == table, "the restore did not rebuild the table"
    mb = state["bytes_cleaned"] / 1e6
    result = {
        "updates": updates,
        "keys": keys,
        "write_s": round(write_s, 2),
        "log_mb": round(mb, 1),
        "clean_s_wall": round(clean_s, 2),
        "cleaner_mb_per_s_wall": round(mb / clean_s, 2),
        "cleaner_mb_per_s_logged": [float(m.group(3)) for m in logged],
        "produce_idle_per_s": round(idle_rate),
        "produce_while_cleaning_per_s": round(busy_rate),
        "produce_ratio": round(busy_rate / idle_rate, 3) if idle_rate else None,
        "restore_records_read": read,
        "restore_s": round(restore_s, 2),
        "cleanings": state["cleanings"],
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "result.json").write_text(json.dumps(result, indent=2))
    return result


def _markdown(r: dict[str, Any]) -> str:
    rows = [
        ("updates / keys", f"{r['updates']:,} / {r['keys']:,}"),
        ("changelog written in", f"{r['write_s']} s"),
        ("log cleaned", f"{r['log_mb']} MB in {r['clean_s_wall']} s"),
        ("cleaner throughput (wall)", f"{r['cleaner_mb_per_s_wall']} MB/s"),
        ("cleaner throughput (its log line)", ", ".join(f"{v} MB/s" for v in r["cleaner_mb_per_s_logged"])),
        ("produce, cleaner idle", f"{r['produce_idle_per_s']:,} records/s"),
        ("produce, cleaner running", f"{r['produce_while_cleaning_per_s']:,} records/s"),
        ("ratio (goal >= 0.8)", str(r["produce_ratio"])),
        ("restore from offset 0", f"{r['restore_records_read']:,} records in {r['restore_s']} s"),
    ]
    return "\n".join(["| measure | value |", "|---|---|", *(f"| {a} | {b} |" for a, b in rows)])


def crash_loop(iterations: int) -> int:
    env = {**os.environ, "HMB_COMPACTION_CRASH_ITERATIONS": str(iterations), "PYTHONPATH": str(ROOT)}
    test = "tests/system/test_compaction_crash_loop.py"
    return subprocess.call(
        [sys.executable, "-m", "pytest", test, "-q", "-s", "-p", "no:cacheprovider"], cwd=ROOT, env=env
    )


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench compaction", description=__doc__)
    ap.add_argument("--updates", type=int, default=1_000_000)
    ap.add_argument("--keys", type=int, default=10_000)
    ap.add_argument("--window", type=float, default=5.0, help="seconds of produce with the cleaner idle")
    ap.add_argument(
        "--out",
        type=Path,
        default=ROOT / "bench" / "results" / f"compaction-{time.strftime('%Y%m%d-%H%M%S')}",
    )
    ns = ap.parse_args(argv)
    print(_markdown(run(ns.updates, ns.keys, ns.window, ns.out)))
    return 0


def crash_main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench compaction-crash")
    ap.add_argument("--iterations", type=int, default=50)
    return crash_loop(ap.parse_args(argv).iterations)
