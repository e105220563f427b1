"""Node.js clients from npm against hmb: KafkaJS 2.2.4 and @platformatic/kafka
(admin, producer, a consumer group; KafkaJS's transactions).

KafkaJS's ``admin.createTopics`` without a partition count or replication
factor sends CreateTopics v3 with -1 for both; Kafka creates the topic with
the broker's defaults, and so must hmb.  @platformatic/kafka sends only
recent, flexible versions (Metadata v9+, Produce v9+, JoinGroup v6+,
FindCoordinator v4+, OffsetFetch v8+, Fetch v12+): it creates and lists
topics, produces, joins a group and reads every record back here.  The clients are installed by
``scripts/test`` into ``tests/interop/node`` (``npm install``); without Node
or the package the test is skipped with the reason.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from broker_process import BrokerProcess

from hmb.api import HANDLERS
from kproto import ApiKey

pytestmark = pytest.mark.interop

NODE_DIR = Path(__file__).resolve().parent / "node"


def node_script(name: str, package: str) -> list[str]:
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node.js is not installed (Debian package 'nodejs')")
    if not (NODE_DIR / "node_modules" / package).is_dir():
        pytest.skip(f"npm package {package} is not installed: run `npm install` in {NODE_DIR}")
    return [node, str(NODE_DIR / name)]


def test_kafkajs_admin_produce_and_group_consume(make_broker) -> None:  # type: ignore[no-untyped-def]
    broker: BrokerProcess = make_broker("num.partitions=3", "auto.create.topics.enable=false")
    cmd = node_script("kafkajs_roundtrip.js", "kafkajs")
    done = subprocess.run(
        [*cmd, broker.bootstrap, "kafkajs-events", "300"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["created"] is True  # created with the broker's defaults, not refused
    assert (out["partitions"], out["topics"]) == (3, True)
    assert {p["errorCode"] for p in out["produced"]} == {0}
    assert sorted(out["consumed"], key=lambda v: int(v[1:])) == [f"v{i}" for i in range(300)]
    assert out["committed"] == 300  # the group's offsets end at the end of every partition


PLATFORMATIC_FETCH = 12
"""The oldest Fetch version @platformatic/kafka implements."""


def test_platformatic_admin_produce_and_group(make_broker) -> None:  # type: ignore[no-untyped-def]
    broker: BrokerProcess = make_broker("auto.create.topics.enable=false")
    cmd = node_script("platformatic_roundtrip.mjs", "@platformatic/kafka")
    done = subprocess.run(
        [*cmd, broker.bootstrap, "platformatic-events", "200"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["created"] == [{"name": "platformatic-events", "partitions": 2}]
    assert out["listed"] is True
    assert out["produced"] and all(p["partition"] in (0, 1) and p["offset"] == 0 for p in out["produced"])
    assert out["joined"] is True
    assert out["group"] == {"state": "STABLE", "members": 1, "protocol": "roundrobin"}
    assert HANDLERS[ApiKey.FETCH].max_version >= PLATFORMATIC_FETCH
    assert "consume_error" not in out, out.get("consume_error")
    assert sorted(out["consumed"], key=lambda v: int(v[1:])) == [f"v{i}" for i in range(200)]


def test_kafkajs_transactional_producer(broker: BrokerProcess) -> None:
    """KafkaJS commits, aborts and commits: its read_committed consumer sees the committed ones only."""
    cmd = node_script("kafkajs_transactions.js", "kafkajs")
    done = subprocess.run(
        [*cmd, broker.bootstrap, "kafkajs-txn"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["ended"] == ["commit", "abort", "commit"]
    assert out["consumed"] == [f"c0-{i}" for i in range(5)] + [f"c2-{i}" for i in range(5)]
