"""The pytest plugin as users run it: in a pytest subprocess, with xdist, isolation and --hmb-external."""

from __future__ import annotations

import configparser
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

USER_TESTS = """
import os
import re
from pathlib import Path

import pytest
from kafka import KafkaProducer

SEEN = []

@pytest.fixture(autouse=True)
def record_worker(hmb_bootstrap_servers):
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    (Path(os.environ["OUT"]) / f"seen-{worker}").write_text(hmb_bootstrap_servers)

def test_broker_per_worker(hmb_broker, hmb_bootstrap_servers):
    assert hmb_broker.bootstrap_servers == hmb_bootstrap_servers

def test_topics_are_fresh(hmb_topic, hmb_bootstrap):
    topic = hmb_topic(partitions=3)
    producer = KafkaProducer(bootstrap_servers=hmb_bootstrap)
    producer.send(topic, b"x", partition=2).get(timeout=10)
    producer.close()

def test_isolation(hmb_test_broker, hmb_broker):
    SEEN.append(hmb_test_broker.bootstrap_servers)
    expect_fresh = os.environ["EXPECT"] == "test"
    assert (hmb_test_broker is not hmb_broker) == expect_fresh

def test_control_is_skipped_when_external(hmb_test_broker, hmb_topic):
    topic = hmb_topic()
    assert hmb_test_broker.watermarks(topic) == {"log_start_offset": 0, "high_watermark": 0}
"""


def _run(tmp_path: Path, *args: str, expect: str = "session") -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_user.py").write_text(USER_TESTS)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "EXPECT": expect, "OUT": str(tmp_path)}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "hmb.pytest_plugin",
            "-p",
            "no:cacheprovider",
            "-q",
            "-rs",
            *args,
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_two_xdist_workers_each_get_their_own_broker(tmp_path: Path) -> None:
    pytest.importorskip("xdist")
    result = _run(tmp_path, "-n", "2")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 passed" in result.stdout
    seen = {p.name: p.read_text() for p in tmp_path.glob("seen-gw*")}
    assert len(seen) == 2, (seen, result.stdout)  # both workers ran tests ...
    assert len(set(seen.values())) == 2  # ... each on a broker of its own


def test_per_test_isolation(tmp_path: Path) -> None:
    result = _run(tmp_path, "--hmb-isolation=test", expect="test")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 passed" in result.stdout


def test_external_broker(tmp_path: Path, hmb_fresh_broker) -> None:  # type: ignore[no-untyped-def]
    """--hmb-external: the same tests against a broker in another process; control tests skip."""
    result = _run(tmp_path, f"--hmb-external={hmb_fresh_broker.bootstrap_servers}")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 passed, 1 skipped" in result.stdout
    assert "needs the embedded broker's control API" in result.stdout
    assert any(t.startswith("test_topics_are_fresh") for t in hmb_fresh_broker.topics()) is False  # deleted


def test_the_plugin_is_an_entry_point() -> None:
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    assert "hmb.pytest_plugin = hmb.pytest_plugin" in cfg["options.entry_points"]["pytest11"]


def test_the_readme_example_passes(tmp_path: Path) -> None:
    """The README's pytest example, run as a user runs it."""
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    (example,) = [b for b in blocks if "def test_three_clients_one_topic(hmb_bootstrap, hmb_topic)" in b]
    (tmp_path / "test_readme_example.py").write_text(example)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "hmb.pytest_plugin", "-p", "no:cacheprovider", "-q"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout
