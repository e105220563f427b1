"""Stream-processing frameworks against hmb: Quix Streams and Faust run a stateful application.

It runs at-least-once and exactly-once (``processing_guarantee``: a
transactional producer whose transactions carry the consumed offsets, and
read_committed consumers): the counts come out the same, each once.
Faust (faust-streaming, on aiokafka) does the same with a Table: exactly-once
it keeps one transactional producer per input partition.

Quix Streams checks every topic's settings with DescribeConfigs at start,
creates its changelog topics with ``cleanup.policy=compact`` and commits
offsets in a consumer group: before hmb served DescribeConfigs it stopped at
start-up.  The framework pins an older confluent-kafka than the suite's, so
it lives in its own virtualenv (``.venv-frameworks``, made by scripts/test;
Faust shares it) and the application runs as a subprocess of that interpreter.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from broker_process import BrokerProcess

pytestmark = pytest.mark.interop

ROOT = Path(__file__).resolve().parents[2]
FRAMEWORKS_PYTHON = ROOT / ".venv-frameworks" / "bin" / "python"
HERE = Path(__file__).resolve().parent / "frameworks"


def framework_python(module: str) -> Path:
    if not FRAMEWORKS_PYTHON.exists():
        pytest.skip("no .venv-frameworks: scripts/test creates it (pip install quixstreams faust-streaming)")
    found = subprocess.run([FRAMEWORKS_PYTHON, "-c", f"import {module}"], capture_output=True)
    if found.returncode:
        pytest.skip(f"{module} is not installed in .venv-frameworks")
    return FRAMEWORKS_PYTHON


WORDS = ["apple", "pear", "apple", "fig", "apple", "pear"]
# every count the applications write for WORDS, in the order they write them
COUNTS = [("apple", 1), ("pear", 1), ("apple", 2), ("fig", 1), ("apple", 3), ("pear", 2)]
FINAL = {"apple": 3, "pear": 2, "fig": 1}
FAUST_CHANGELOG = "faust-word-count-word-counts-changelog"


def produce_words(ck: Any, bootstrap: str, words: list[str]) -> None:
    """Words into "words", each keyed by itself (the key the counts are kept by)."""
    producer = ck.Producer({"bootstrap.servers": bootstrap, "log_level": 3})
    for w in words:
        producer.produce("words", key=w.encode(), value=w.encode())
    assert producer.flush(30) == 0


def run_app(python: Path, script: str, bootstrap: str, state: Path, expected: int, guarantee: str) -> str:
    """Run one of the frameworks/ applications to its end; what it printed."""
    done = subprocess.run(
        [python, HERE / script, bootstrap, state, "words", "counts", str(expected), guarantee],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def final_counts(stdout: str) -> dict[str, int]:
    """The highest count per word among the JSON lines an application printed."""
    final: dict[str, int] = {}
    for row in (json.loads(line) for line in stdout.splitlines() if line.startswith("{")):
        final[row["word"]] = max(final.get(row["word"], 0), row["count"])
    return final


def read_committed(ck: Any, bootstrap: str, topic: str, expected: int) -> list[tuple[bytes, bytes]]:
    """The (key, value) records of partition 0 of ``topic`` a read_committed consumer sees, in order.

    It reads until it has ``expected`` records, then once more for a bounded
    second: a record written twice shows up as one too many.
    """
    consumer = ck.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"check-{topic}",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            "isolation.level": "read_committed",
            "log_level": 3,
        }
    )
    consumer.subscribe([topic])
    seen = []
    for _ in range(100):
        msg = consumer.poll(0.2)
        if msg is not None and not msg.error():
            seen.append((msg.key(), msg.value()))
        if len(seen) == expected:
            break
    seen += [(m.key(), m.value()) for m in consumer.consume(100, timeout=1.0) if not m.error()]
    consumer.close()
    return seen


def read_counts(ck: Any, bootstrap: str, expected: int) -> list[tuple[str, int]]:
    """The (word, count) rows of "counts" as a read_committed consumer sees them, sorted."""
    rows = [json.loads(value) for _key, value in read_committed(ck, bootstrap, "counts", expected)]
    return sorted((r["word"], r["count"]) for r in rows)


def high_watermark(ck: Any, bootstrap: str, topic: str) -> int:
    """The end offset of partition 0 of ``topic``: its records plus any transaction markers."""
    consumer = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": "watermarks", "log_level": 3})
    try:
        return int(consumer.get_watermark_offsets(ck.TopicPartition(topic, 0), timeout=10)[1])
    finally:
        consumer.close()


@pytest.mark.parametrize("guarantee", ["at-least-once", "exactly-once"])
def test_quix_streams_stateful_count(broker: BrokerProcess, tmp_path: Path, guarantee: str) -> None:
    python = framework_python("quixstreams")
    ck = pytest.importorskip("confluent_kafka")
    produce_words(ck, broker.bootstrap, WORDS)
    stdout = run_app(
        python, "quix_word_count.py", broker.bootstrap, tmp_path / "state", len(WORDS), guarantee
    )
    # exactly-once went through the transaction coordinator (its state topic exists only then)
    assert (broker.data_dir / "__transaction_state-0").is_dir() == (guarantee == "exactly-once")
    assert final_counts(stdout) == FINAL
    assert read_counts(ck, broker.bootstrap, len(WORDS)) == sorted(COUNTS)


@pytest.mark.parametrize("guarantee", ["at_least_once", "exactly_once"])
def test_faust_stateful_count(broker: BrokerProcess, tmp_path: Path, guarantee: str) -> None:
    """Faust's Table counts a keyed stream; exactly-once through hmb's transaction coordinator.

    Exactly-once, Faust writes the table's changelog and commits the consumed
    offsets in transactions (one transactional producer per input partition),
    so the changelog ends in a COMMIT marker, one offset past its last record,
    and a read_committed reader sees the records only once it is written.
    Faust sends to other topics ("counts") with its plain producer even then:
    those records are visible at once, and a read_committed reader of them
    sees each count once.
    """
    python = framework_python("faust")
    ck = pytest.importorskip("confluent_kafka")
    bootstrap, exactly_once = broker.bootstrap, guarantee == "exactly_once"
    produce_words(ck, bootstrap, WORDS)
    stdout = run_app(python, "faust_word_count.py", bootstrap, tmp_path / "state", len(WORDS), guarantee)
    assert final_counts(stdout) == FINAL
    # exactly-once went through the transaction coordinator (its state topic exists only then)
    assert (broker.data_dir / "__transaction_state-0").is_dir() == exactly_once
    changelog_end = high_watermark(ck, bootstrap, FAUST_CHANGELOG)
    assert changelog_end > len(WORDS) if exactly_once else changelog_end == len(WORDS)
    assert read_counts(ck, bootstrap, len(WORDS)) == sorted(COUNTS)
    changelog = read_committed(ck, bootstrap, FAUST_CHANGELOG, len(WORDS))
    assert [(json.loads(k), json.loads(v)) for k, v in changelog] == COUNTS
    # the consumed offsets were committed (exactly-once: in the transaction, visible on its commit)
    consumer = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": "faust-word-count", "log_level": 3})
    try:
        [committed] = consumer.committed([ck.TopicPartition("words", 0)], timeout=10)
    finally:
        consumer.close()
    assert committed.offset == len(WORDS)
