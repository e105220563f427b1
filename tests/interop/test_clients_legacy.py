"""Real third-party clients in Kafka 0.8.2 mode against the real broker process.

kafka-python with ``api_version=(0, 8, 2)``, librdkafka (confluent-kafka)
with ``api.version.request=false, broker.version.fallback=0.8.2``, and kcat
from Debian with the same settings: what they produce comes back
byte-identical and in order, group offsets survive a restart, and a kill -9
loses nothing that was acknowledged.
"""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from broker_process import BrokerProcess, rdkafka_read_back

pytestmark = pytest.mark.interop

confluent_kafka = pytest.importorskip("confluent_kafka")
kafka = pytest.importorskip("kafka")

LEGACY_RDKAFKA = {
    "api.version.request": False,
    "broker.version.fallback": "0.8.2",
    "log_level": 3,
}


def _rd(broker: BrokerProcess, **extra: Any) -> dict[str, Any]:
    return {"bootstrap.servers": broker.bootstrap, **LEGACY_RDKAFKA, **extra}


def _consume_all(
    broker: BrokerProcess, topic: str, expected: int, partition: int = 0, timeout: float = 60
) -> list[Any]:
    return rdkafka_read_back(broker.bootstrap, topic, partition, expected, timeout)


def _value(i: int) -> bytes:
    return b"%09d|" % i + bytes((i * 7 + k) % 251 for k in range(90))


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4"])
def test_confluent_legacy_100k_byte_identical(broker: BrokerProcess, codec: str) -> None:
    n = 100_000
    topic = f"ck-{codec}"
    p = confluent_kafka.Producer(
        _rd(
            broker,
            **{
                "compression.codec": codec,
                "linger.ms": 5,
                "batch.size": 16384,
                "acks": 1,
            },
        )
    )
    failures: list[Any] = []
    for i in range(n):
        while True:
            try:
                p.produce(
                    topic,
                    _value(i),
                    key=b"k%d" % (i % 100),
                    on_delivery=lambda err, msg: err and failures.append(err),
                )
                break
            except BufferError:
                p.poll(0.05)
    assert p.flush(60) == 0
    assert not failures
    got = _consume_all(broker, topic, n)
    assert len(got) == n
    assert [m.offset() for m in got] == list(range(n))
    assert all(m.value() == _value(i) and m.key() == b"k%d" % (i % 100) for i, m in enumerate(got))


def test_kafka_python_produce_consume_and_group_resume_after_restart(broker: BrokerProcess) -> None:
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition

    producer = KafkaProducer(bootstrap_servers=broker.bootstrap, api_version=(0, 8, 2))
    futures = [producer.send("kp", key=b"key-%d" % i, value=b"value-%d" % i) for i in range(500)]
    producer.flush()
    offsets = [f.get(timeout=10).offset for f in futures]
    assert offsets == list(range(500))
    producer.close()

    tp = TopicPartition("kp", 0)
    plain = KafkaConsumer(
        bootstrap_servers=broker.bootstrap,
        api_version=(0, 8, 2),
        auto_offset_reset="earliest",
        consumer_timeout_ms=3000,
    )
    plain.assign([tp])
    seen = [(m.offset, m.key, m.value) for m in plain]
    plain.close()
    assert seen == [(i, b"key-%d" % i, b"value-%d" % i) for i in range(500)]

    grouped = KafkaConsumer(
        bootstrap_servers=broker.bootstrap,
        api_version=(0, 8, 2),
        group_id="g1",
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        consumer_timeout_ms=3000,
    )
    grouped.assign([tp])
    first = []
    for m in grouped:
        first.append(m.offset)
        if len(first) == 200:
            break
    grouped.commit()
    assert grouped.committed(tp) == 200
    grouped.close()

    broker.stop()
    broker.restart()

    resumed = KafkaConsumer(
        bootstrap_servers=broker.bootstrap,
        api_version=(0, 8, 2),
        group_id="g1",
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        consumer_timeout_ms=3000,
    )
    resumed.assign([tp])
    rest = [m.offset for m in resumed]
    resumed.close()
    assert rest == list(range(200, 500))


KCAT = shutil.which("kcat") or shutil.which("kafkacat")


@pytest.mark.skipif(
    KCAT is None,
    reason="kcat is not installed (Debian package 'kcat'); scripts/test installs it when run as root",
)
def test_kcat_legacy_produce_and_consume(broker: BrokerProcess) -> None:
    assert KCAT is not None
    legacy = ["-X", "api.version.request=false", "-X", "broker.version.fallback=0.8.2"]
    lines = "".join(f"key{i}:line {i}\n" for i in range(200))
    subprocess.run(
        [KCAT, "-P", "-b", broker.bootstrap, "-t", "kc", "-K:", *legacy],
        input=lines,
        text=True,
        check=True,
        timeout=60,
        capture_output=True,
    )
    out = subprocess.run(
        [
            KCAT,
            "-C",
            "-b",
            broker.bootstrap,
            "-t",
            "kc",
            "-o",
            "beginning",
            "-e",
            "-f",
            "%o %k %s\n",
            *legacy,
        ],
        text=True,
        check=True,
        timeout=60,
        capture_output=True,
    )
    assert out.stdout.splitlines() == [f"{i} key{i} line {i}" for i in range(200)]


def test_kill_9_mid_stream_loses_nothing_acknowledged(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "data").start()
    try:
        acked: dict[int, bytes] = {}
        lock = threading.Lock()
        stop = threading.Event()

        def on_delivery(err: Any, msg: Any) -> None:
            if err is None:
                with lock:
                    acked[msg.offset()] = msg.value()

        def produce_forever() -> None:
            p = confluent_kafka.Producer(
                _rd(
                    broker,
                    **{
                        "linger.ms": 2,
                        "acks": 1,
                        "message.timeout.ms": 5000,
                        "retries": 0,
                    },
                )
            )
            i = 0
            while not stop.is_set():
                try:
                    p.produce("crash", _value(i), on_delivery=on_delivery)
                    i += 1
                except BufferError:
                    p.poll(0.01)
                p.poll(0)
            p.flush(10)

        t = threading.Thread(target=produce_forever)
        t.start()
        deadline = time.monotonic() + 30
        while (
            time.monotonic() < deadline
        ):  # bounded wait: enough acknowledged to make the test mean something
            with lock:
                if len(acked) >= 20_000:
                    break
            time.sleep(0.01)
        broker.kill()
        stop.set()
        t.join(30)
        with lock:
            snapshot = dict(acked)
        assert len(snapshot) >= 20_000

        broker.restart()
        broker.wait_for_log(r"recovered crash-0|loaded \d+ topics")
        got = _consume_all(broker, "crash", max(snapshot) + 1)
        by_offset = {m.offset(): m.value() for m in got}
        assert [m.offset() for m in got] == list(range(len(got))), "offsets must be dense after recovery"
        missing = [o for o, v in snapshot.items() if by_offset.get(o) != v]
        assert not missing, f"{len(missing)} acknowledged messages lost or changed, e.g. {missing[:5]}"

        # producing continues at the right offset
        p = confluent_kafka.Producer(_rd(broker, acks=1))
        after: list[int] = []
        p.produce("crash", b"after-restart", on_delivery=lambda e, m: after.append(m.offset()))
        assert p.flush(10) == 0
        assert after == [len(got)]
    finally:
        broker.kill()
