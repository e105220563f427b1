"""hmb_client's Producer against the real broker process.

What it sends is read back by an independent client (librdkafka in 0.8.2
mode) byte for byte; batching, linger, acks, compression, retries across a
broker restart and failures that must not hang are each checked.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from typing import Any

import pytest
from broker_process import BrokerProcess, rdkafka_read_back

from hmb_client.errors import (
    KafkaError,
    KafkaTimeoutError,
    MessageTooLargeError,
    NoBrokersAvailable,
    UnknownTopicOrPartitionError,
)
from hmb_client.producer import Producer
from hmb_client.producer.partitioner import partition_for_key

ck = pytest.importorskip("confluent_kafka")
LEGACY = {"api.version.request": False, "broker.version.fallback": "0.8.2", "log_level": 3}


# Only an address is needed here: the broker runs in the test process (the tests
# that restart, kill or stop it take ``process_broker``).
@pytest.fixture
def broker(in_process_broker):  # type: ignore[no-untyped-def]
    return in_process_broker


@pytest.fixture
def make_broker(make_in_process_broker):  # type: ignore[no-untyped-def]
    return make_in_process_broker


def read_back(
    broker: BrokerProcess, topic: str, partition: int, expected: int, timeout: float = 30
) -> list[Any]:
    return rdkafka_read_back(broker.bootstrap, topic, partition, expected, timeout)


@pytest.mark.parametrize("compression", [None, "gzip", "snappy", "lz4"])
@pytest.mark.parametrize("acks", [1, -1])
def test_round_trip_byte_identical(broker: BrokerProcess, compression: str | None, acks: int) -> None:
    topic = f"rt-{compression}-{acks}".replace("-1", "all")
    values = [bytes((i * 31 + j) % 256 for j in range(i % 300)) for i in range(3000)]
    keys = [None if i % 3 == 0 else b"key-%d" % i for i in range(3000)]
    with Producer(broker.bootstrap, acks=acks, compression_type=compression, batch_size=8192) as p:
        futures = [p.send(topic, v, key=k) for k, v in zip(keys, values, strict=True)]
        p.flush(30)
        offsets = [f.get(0).offset for f in futures]
    assert offsets == list(range(3000))
    got = read_back(broker, topic, 0, 3000)
    assert [(m.offset(), m.key(), m.value() or b"") for m in got] == [
        (i, k, v) for i, (k, v) in enumerate(zip(keys, values, strict=True))
    ]


def test_acks_0_is_fire_and_forget(broker: BrokerProcess) -> None:
    with Producer(broker.bootstrap, acks=0) as p:
        futures = [p.send("fire", b"m%d" % i) for i in range(500)]
        p.flush(30)
        assert all(f.get(0).offset == -1 for f in futures)
    assert [m.value() for m in read_back(broker, "fire", 0, 500)] == [b"m%d" % i for i in range(500)]


def test_linger_holds_a_lone_record(broker: BrokerProcess) -> None:
    with Producer(broker.bootstrap, linger_ms=400) as p:
        p.partitions_for("linger")  # metadata first, so only the linger delays the send
        start = time.monotonic()
        f = p.send("linger", b"lonely")
        f.get(10)
        assert time.monotonic() - start >= 0.35, "a record below batch_size must wait linger_ms"


def test_full_batches_leave_without_waiting_for_linger(broker: BrokerProcess) -> None:
    with Producer(broker.bootstrap, linger_ms=60_000, batch_size=4096) as p:
        futures = [p.send("full", b"x" * 1000) for _ in range(20)]
        assert futures[0].get(10).offset == 0  # its batch filled up: sent at once
        assert not futures[-1].done()  # the last, partial batch lingers
        p.flush(10)
        assert futures[-1].get(0).offset == 19


def test_keys_follow_the_java_partitioner(make_broker) -> None:  # type: ignore[no-untyped-def]
    broker = make_broker("num.partitions=5")
    with Producer(broker.bootstrap) as p:
        futures = {b"k%d" % i: p.send("keys", b"v", key=b"k%d" % i) for i in range(100)}
        p.flush(10)
        assert all(f.get(0).partition == partition_for_key(k, 5) for k, f in futures.items())
        rr = Producer(broker.bootstrap, partitioner="round_robin")
        parts = [rr.send("keys", b"v", key=b"same").get(10).partition for _ in range(10)]
        rr.close()
        assert sorted(set(parts)) == [0, 1, 2, 3, 4]


def test_oversized_record_fails_its_future_only(broker: BrokerProcess) -> None:
    with Producer(broker.bootstrap, max_request_size=10_000) as p:
        bad = p.send("big", b"x" * 20_000)
        good = p.send("big", b"fine")
        assert isinstance(bad.exception(1), MessageTooLargeError)
        assert good.get(10).offset == 0


def test_value_of_a_wrong_type_is_refused_in_send(broker: BrokerProcess) -> None:
    """A str without a serializer is the caller's TypeError; it once reached the I/O
    thread's encoder, which crashed and left every later send() to time out."""
    with Producer(broker.bootstrap, linger_ms=0) as p:
        with pytest.raises(TypeError, match="value must be bytes"):
            p.send("typed", "a str")
        with pytest.raises(TypeError, match="key_serializer"):
            p.send("typed", b"v", key=42)
        assert p.send("typed", bytearray(b"ba"), key=memoryview(b"mk")).get(10).offset == 0
        assert p.send("typed", b"fine").get(10).offset == 1
    with Producer(broker.bootstrap, value_serializer=str.encode) as p:
        assert p.send("typed", "serialized").get(10).offset == 2


def test_broker_side_message_too_large(make_broker) -> None:  # type: ignore[no-untyped-def]
    broker = make_broker("message.max.bytes=1000")
    with Producer(broker.bootstrap, linger_ms=0) as p:
        f = p.send("limits", b"x" * 5000)
        with pytest.raises(MessageTooLargeError):
            f.get(10)
        assert p.send("limits", b"small").get(10).offset == 0


def test_serializers_and_errbacks(broker: BrokerProcess) -> None:
    import json

    seen: list[int] = []
    with Producer(
        broker.bootstrap, value_serializer=lambda v: json.dumps(v).encode(), key_serializer=str.encode
    ) as p:
        done = threading.Event()
        p.send("ser", {"n": 1}, key="a").add_callback(lambda md: (seen.append(md.offset), done.set()))
        assert done.wait(10)
    assert seen == [0]
    assert read_back(broker, "ser", 0, 1)[0].value() == b'{"n": 1}'


def test_unreachable_bootstrap_fails_within_max_block(tmp_path: Any) -> None:
    from broker_process import free_port

    start = time.monotonic()
    p = Producer(f"127.0.0.1:{free_port()}", max_block_ms=2000)
    with pytest.raises((NoBrokersAvailable, KafkaError)):
        p.send("nowhere", b"x")
    assert time.monotonic() - start < 30
    p.close(1)


def test_unknown_topic_with_auto_create_off(make_broker) -> None:  # type: ignore[no-untyped-def]
    broker = make_broker("auto.create.topics.enable=false")
    with Producer(broker.bootstrap, max_block_ms=1500) as p, pytest.raises(UnknownTopicOrPartitionError):
        p.send("missing", b"x")


def test_retries_across_a_broker_restart_lose_nothing(process_broker: BrokerProcess) -> None:
    broker = process_broker
    p = Producer(broker.bootstrap, retries=50, retry_backoff_ms=100, delivery_timeout_ms=60_000, linger_ms=1)
    first = [p.send("restart", b"before-%d" % i) for i in range(200)]
    p.flush(10)
    broker.stop()
    during = [p.send("restart", b"during-%d" % i) for i in range(200)]  # broker down: queued and retried
    broker.restart()
    p.flush(60)
    assert all(f.exception(0) is None for f in first + during)
    p.close()
    values = {m.value() for m in read_back(broker, "restart", 0, 400)}
    assert {b"before-%d" % i for i in range(200)} <= values
    assert {b"during-%d" % i for i in range(200)} <= values


def test_broker_killed_mid_send_never_hangs(process_broker: BrokerProcess) -> None:
    broker = process_broker
    # Batches that could not even be sent wait for the broker until delivery_timeout_ms,
    # as in Kafka; retries=0 only stops re-sending what was sent.
    p = Producer(broker.bootstrap, retries=0, request_timeout_ms=2000, delivery_timeout_ms=5000, linger_ms=1)
    p.partitions_for("doomed")
    futures = [p.send("doomed", b"x" * 100) for _ in range(2000)]
    broker.kill()
    futures += [p.send("doomed", b"y") for _ in range(10)]
    deadline = time.monotonic() + 20
    for f in futures:  # each completes one way or the other within the delivery timeout
        try:
            f.get(max(0.0, deadline - time.monotonic()))
        except KafkaError:
            pass
        assert f.done()
    assert all(f.exception(0) is not None for f in futures[-10:]), "records sent after the kill must fail"
    p.close(1)


def test_request_timeout_fails_the_request_and_reconnects(process_broker: BrokerProcess) -> None:
    broker = process_broker
    # Requests are timed by one watchdog per connection, not a cancel scope each: a
    # broker that stops answering must still fail them after request_timeout_ms, and
    # the producer must carry on over a new connection once the broker answers again.
    p = Producer(broker.bootstrap, retries=0, request_timeout_ms=1000, linger_ms=0)
    try:
        p.send("stall", b"before").get(30)
        assert broker.proc is not None
        os.kill(broker.proc.pid, signal.SIGSTOP)
        try:
            started = time.monotonic()
            stalled = p.send("stall", b"during")
            with pytest.raises(KafkaTimeoutError, match="no response"):
                stalled.get(15)
            waited = time.monotonic() - started
            assert 0.9 <= waited < 5, f"timed out after {waited:.2f}s, not ~1s"
        finally:
            os.kill(broker.proc.pid, signal.SIGCONT)
        assert p.send("stall", b"after").get(30).offset >= 1
    finally:
        p.close(5)
