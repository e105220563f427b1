"""Stream-processing frameworks against hmb: Quix Streams runs a stateful application.

It runs at-least-once and exactly-once (``processing_guarantee``: a
transactional producer whose transactions carry the consumed offsets, and
read_committed consumers): the counts come out the same, each once.

Quix Streams checks every topic's settings with DescribeConfigs at start,
creates its changelog topics with ``cleanup.policy=compact`` and commits
offsets in a consumer group: before hmb served DescribeConfigs it stopped at
start-up.  The framework pins an older confluent-kafka than the suite's, so
it lives in its own virtualenv (``.venv-frameworks``, made by scripts/test)
and the application runs as a subprocess of that interpreter.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from broker_process import BrokerProcess

pytestmark = pytest.mark.interop

ROOT = Path(__file__).resolve().parents[2]
FRAMEWORKS_PYTHON = ROOT / ".venv-frameworks" / "bin" / "python"
HERE = Path(__file__).resolve().parent / "frameworks"


def framework_python(module: str) -> Path:
    if not FRAMEWORKS_PYTHON.exists():
        pytest.skip("no .venv-frameworks: scripts/test creates it (pip install quixstreams there)")
    found = subprocess.run([FRAMEWORKS_PYTHON, "-c", f"import {module}"], capture_output=True)
    if found.returncode:
        pytest.skip(f"{module} is not installed in .venv-frameworks")
    return FRAMEWORKS_PYTHON


@pytest.mark.parametrize("guarantee", ["at-least-once", "exactly-once"])
def test_quix_streams_stateful_count(broker: BrokerProcess, tmp_path: Path, guarantee: str) -> None:
    python = framework_python("quixstreams")
    ck = pytest.importorskip("confluent_kafka")
    words = ["apple", "pear", "apple", "fig", "apple", "pear"]
    producer = ck.Producer({"bootstrap.servers": broker.bootstrap, "log_level": 3})
    for w in words:
        producer.produce("words", key=w.encode(), value=w.encode())
    assert producer.flush(30) == 0
    done = subprocess.run(
        [
            python,
            HERE / "quix_word_count.py",
            broker.bootstrap,
            tmp_path / "state",
            "words",
            "counts",
            str(len(words)),
            guarantee,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    # exactly-once went through the transaction coordinator (its state topic exists only then)
    assert (broker.data_dir / "__transaction_state-0").is_dir() == (guarantee == "exactly-once")
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    final = {}
    for row in rows:
        final[row["word"]] = max(final.get(row["word"], 0), row["count"])
    assert final == {"apple": 3, "pear": 2, "fig": 1}

    consumer = ck.Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": "check",
            "auto.offset.reset": "earliest",
            "log_level": 3,
        }
    )
    consumer.subscribe(["counts"])
    seen = []
    for _ in range(100):
        msg = consumer.poll(0.2)
        if msg is not None and not msg.error():
            seen.append(json.loads(msg.value()))
        if len(seen) == len(words):
            break
    consumer.close()
    assert sorted((r["word"], r["count"]) for r in seen) == sorted(
        [("apple", 1), ("apple", 2), ("apple", 3), ("pear", 1), ("pear", 2), ("fig", 1)]
    )
