"""Today's clients with their default settings against hmb: they ask ApiVersions first, pick
the highest versions both sides know, and produce and consume (with assign).

The ApiVersions table and its "too new" answer are tested in process
(``tests/api/test_api_versions.py``, ``test_dispatch.py``).
"""

from __future__ import annotations

import shutil
import subprocess
import time

import pytest
from broker_process import BrokerProcess

pytestmark = pytest.mark.interop


def test_confluent_kafka_with_default_settings(broker: BrokerProcess) -> None:
    ck = pytest.importorskip("confluent_kafka")
    conf = {"bootstrap.servers": broker.bootstrap, "log_level": 3}
    p = ck.Producer(conf)
    for i in range(2000):
        p.produce("modern", b"value-%d" % i, key=b"k%d" % i)
    assert p.flush(30) == 0
    c = ck.Consumer({**conf, "group.id": "assign-only", "enable.auto.commit": False})
    c.assign([ck.TopicPartition("modern", 0, 0)])
    got = []
    deadline = time.monotonic() + 30
    while len(got) < 2000 and time.monotonic() < deadline:
        got += [(m.offset(), m.key(), m.value()) for m in c.consume(1000, 0.5) if not m.error()]
    c.close()
    assert got == [(i, b"k%d" % i, b"value-%d" % i) for i in range(2000)]


def test_kafka_python_with_default_settings(broker: BrokerProcess) -> None:
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition

    p = KafkaProducer(bootstrap_servers=broker.bootstrap)
    futures = [p.send("kp-modern", b"m%d" % i) for i in range(300)]
    p.flush()
    assert [f.get(10).offset for f in futures] == list(range(300))
    p.close()
    c = KafkaConsumer(
        bootstrap_servers=broker.bootstrap, auto_offset_reset="earliest", consumer_timeout_ms=3000
    )
    c.assign([TopicPartition("kp-modern", 0)])
    assert [m.value for m in c] == [b"m%d" % i for i in range(300)]
    c.close()


KCAT = shutil.which("kcat")


@pytest.mark.skipif(KCAT is None, reason="kcat is not installed (Debian package 'kcat')")
def test_kcat_with_default_settings(broker: BrokerProcess) -> None:
    assert KCAT is not None
    subprocess.run(
        [KCAT, "-P", "-b", broker.bootstrap, "-t", "kc-modern"],
        input="a\nb\nc\n",
        text=True,
        check=True,
        timeout=60,
        capture_output=True,
    )
    out = subprocess.run(
        [KCAT, "-C", "-b", broker.bootstrap, "-t", "kc-modern", "-o", "beginning", "-e"],
        text=True,
        check=True,
        timeout=60,
        capture_output=True,
    )
    assert out.stdout.splitlines() == ["a", "b", "c"]
