"""A changelog restore, as a stateful stream application does it: an application keeps a
table of 1,000 keys and writes each of its 100,000 updates to a compacted changelog topic
while the broker's cleaner runs; a restore from offset 0 then rebuilds exactly the final
table, and after cleaning the topic holds one record per key plus the active segment.

The issue's full size (1,000,000 updates over 10,000 keys) is the benchmark
``python -m bench compaction``; this is the size the test suite affords.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

from broker_process import BrokerProcess, free_port

from hmb_client import Consumer, Producer
from hmb_client.tools.control import control_call
from hmb_cmd import main

UPDATES = 100_000
KEYS = 1_000
TOPIC = "table-changelog"


def _run_application(bootstrap: str) -> dict[bytes, bytes]:
    """The application: every update changes its table and goes to the changelog."""
    rng = random.Random(22)
    table: dict[bytes, bytes] = {}
    producer = Producer(bootstrap, linger_ms=5, batch_size=64 * 1024, acks=1)
    try:
        for i in range(UPDATES):
            key = b"user-%04d" % rng.randrange(KEYS)
            value = b"%s balance=%d update=%d" % (key, rng.randrange(10**6), i)
            table[key] = value
            producer.send(TOPIC, value, key=key, partition=0)
        producer.flush(120)
    finally:
        producer.close()
    return table


def _restore(bootstrap: str, high_watermark: int) -> tuple[dict[bytes, bytes], int]:
    """Rebuild the table from offset 0; returns it and how many records were read."""
    table: dict[bytes, bytes] = {}
    read = 0
    consumer = Consumer(bootstrap, enable_auto_commit=False)
    try:
        consumer.assign([(TOPIC, 0)])
        consumer.seek((TOPIC, 0), 0)
        deadline = time.monotonic() + 120
        while consumer.position((TOPIC, 0)) < high_watermark:
            assert time.monotonic() < deadline, "restore did not reach the high watermark"
            for record in consumer.poll(1.0):
                table[record.key] = record.value
                read += 1
    finally:
        consumer.close()
    return table, read


def test_a_changelog_restore_rebuilds_the_final_table(tmp_path: Path) -> None:
    control = f"127.0.0.1:{free_port()}"
    settings = (f"control.listener={control}", "log.cleaner.backoff.ms=200")
    with BrokerProcess(tmp_path / "data", *settings) as broker:
        config = ["--config", "cleanup.policy=compact", "--config", "segment.bytes=1048576"]
        assert (
            main(
                [
                    "topics",
                    "create",
                    TOPIC,
                    "--partitions",
                    "1",
                    *config,
                    "--bootstrap-server",
                    broker.bootstrap,
                ]
            )
            == 0
        )
        table = _run_application(broker.bootstrap)
        control_call(control, "clean_logs", timeout_s=120)  # what is still dirty, now
        [state] = [s for s in control_call(control, "cleaner") if s["topic"] == TOPIC]
        assert state["cleanings"] >= 1 and state["dirty_ratio"] < 0.5
        marks = control_call(control, "watermarks", {"topic": TOPIC})
        restored, read = _restore(broker.bootstrap, marks["high_watermark"])
        assert restored == table
        active = _records_in_active_segment(tmp_path / "data" / f"{TOPIC}-0")
        assert read <= KEYS + active, (read, active)
        assert read < UPDATES / 5


def _records_in_active_segment(directory: Path) -> int:
    """An upper bound of the records in the last segment: its offsets' span."""
    from durability import segment_facts

    last = sorted(directory.glob("*.log"))[-1]
    facts = segment_facts(last)
    return facts.entries[-1].last_offset - facts.base_offset + 1 if facts.entries else 0
