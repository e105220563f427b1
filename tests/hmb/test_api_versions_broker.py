"""ApiVersions on the real broker: the table is the handler registry, a newer
version gets Kafka's v0-layout UNSUPPORTED_VERSION answer and the connection
lives on, and today's clients with their default settings can produce and
consume (with assign) against hmb."""

from __future__ import annotations

import shutil
import struct
import subprocess
import time

import pytest
from broker_process import BrokerProcess
from wire import WireClient, metadata_body

import kproto
from hmb.api import HANDLERS
from kproto import ApiKey, ErrorCode


def _table(body: object) -> dict[int, tuple[int, int]]:
    return {k.api_key: (k.min_version, k.max_version) for k in body.api_keys}  # type: ignore[attr-defined]


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_the_table_is_the_registry(broker: BrokerProcess, version: int) -> None:
    with WireClient(broker.bootstrap) as c:
        body = c.request(
            ApiKey.API_VERSIONS, version, {"client_software_name": "t", "client_software_version": "1"}
        )
    assert body.error_code == 0
    assert _table(body) == {h.api_key: (h.min_version, h.max_version) for h in HANDLERS.values()}
    assert _table(body)[ApiKey.API_VERSIONS] == (0, 3)
    assert all(lo == 0 for lo, _ in _table(body).values()), "old clients need min version 0 everywhere"


def test_a_newer_version_gets_error_35_in_the_v0_layout(broker: BrokerProcess) -> None:
    with WireClient(broker.bootstrap) as c:
        # ApiVersions v4 (flexible header v2: ..., client_id, no tagged fields) with an empty body
        client_id = b"future-client"
        payload = (
            struct.pack(">hhih", ApiKey.API_VERSIONS, 4, 77, len(client_id)) + client_id + b"\x00" + b"\x00"
        )
        c.send_raw(struct.pack(">i", len(payload)) + payload)
        frame = c.read_frame()
        assert frame is not None, "the broker must answer, not close"
        body = kproto.decode_response(ApiKey.API_VERSIONS, 0, frame)
        assert body.correlation_id == 77 and body.body.error_code == ErrorCode.UNSUPPORTED_VERSION
        assert _table(body.body)[ApiKey.API_VERSIONS] == (0, 3)
        assert c.request(ApiKey.METADATA, 0, metadata_body()).brokers  # still served


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
