"""hmb_client's Consumer against the real broker process.

Records are produced by hmb_client's Producer or by independent clients
(librdkafka and kafka-python in Kafka 0.8.2 mode) and must come back byte
for byte, in order, without loss or duplicates: from the start, after seeks,
resets, compression, commits, a broker restart and a broker kill.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from broker_process import BrokerProcess

from hmb_client.admin import Admin
from hmb_client.consumer import Consumer, ConsumerConfig
from hmb_client.errors import (
    IllegalStateError,
    KafkaError,
    MessageTooLargeError,
    OffsetOutOfRangeError,
    UnknownTopicOrPartitionError,
)
from hmb_client.producer import Producer
from hmb_client.structs import ConsumerRecord, OffsetAndMetadata, TopicPartition

ck = pytest.importorskip("confluent_kafka")
kafka = pytest.importorskip("kafka")
LEGACY = {"api.version.request": False, "broker.version.fallback": "0.8.2", "log_level": 3}
TOPIC = "events"  # (librdkafka 2.x cannot parse the metadata of a one-letter topic name)


# Only an address is needed here: the broker runs in the test process (the tests
# that restart, kill or stop it take ``process_broker``).
@pytest.fixture
def broker(in_process_broker):  # type: ignore[no-untyped-def]
    return in_process_broker


@pytest.fixture
def make_broker(make_in_process_broker):  # type: ignore[no-untyped-def]
    return make_in_process_broker


def _value(i: int) -> bytes:
    return b"%07d|" % i + bytes((i * 13 + k) % 256 for k in range(i % 200))


def _key(i: int) -> bytes | None:
    return None if i % 5 == 0 else b"key-%d" % (i % 37)


def produce(broker: BrokerProcess, topic: str, n: int, start: int = 0, **config: Any) -> None:
    with Producer(broker.bootstrap, **config) as p:
        futures = [p.send(topic, _value(i), key=_key(i), partition=0) for i in range(start, start + n)]
        p.flush(30)
        for f in futures:
            f.get(0)


def consume(c: Consumer, n: int, timeout: float = 30.0) -> list[ConsumerRecord]:
    """Poll until ``n`` records arrived (or fail after ``timeout``); never more than ``n`` asked for."""
    got: list[ConsumerRecord] = []
    deadline = time.monotonic() + timeout
    while len(got) < n:
        assert time.monotonic() < deadline, f"only {len(got)} of {n} records within {timeout}s"
        got += c.poll(0.5, max_records=n - len(got))
    return got


def expected(start: int, stop: int, topic: str = TOPIC) -> list[tuple[str, int, int, bytes | None, bytes]]:
    return [(topic, 0, i, _key(i), _value(i)) for i in range(start, stop)]


def triples(records: list[ConsumerRecord]) -> list[tuple[str, int, int, bytes | None, bytes | None]]:
    return [(r.topic, r.partition, r.offset, r.key, r.value) for r in records]


TP = TopicPartition(TOPIC, 0)

# --------------------------------------------------------------------------- config


def test_unknown_and_bad_settings_are_rejected() -> None:
    with pytest.raises(TypeError, match="fetch_max_bytez"):
        Consumer("127.0.0.1:1", fetch_max_bytez=1)
    with pytest.raises(ValueError, match="auto_offset_reset"):
        ConsumerConfig(auto_offset_reset="oldest")
    assert ConsumerConfig(auto_offset_reset="smallest").auto_offset_reset == "earliest"
    cfg = ConsumerConfig()
    assert (
        cfg.client_id,
        cfg.auto_offset_reset,
        cfg.enable_auto_commit,
        cfg.max_poll_records,
        cfg.max_partition_fetch_bytes,
        cfg.fetch_max_wait_ms,
    ) == ("hmb-consumer", "latest", True, 500, 1048576, 500)


# --------------------------------------------------------------------------- basics


def test_assign_and_poll_everything_from_earliest(broker: BrokerProcess) -> None:
    produce(broker, TOPIC, 5000, api_version=(0, 8, 2))  # Produce v0: magic 0, no timestamps
    with Consumer(broker.bootstrap, auto_offset_reset="earliest") as c:
        c.assign([TP])
        assert c.assignment() == {TP}
        got = consume(c, 5000)
        assert triples(got) == expected(0, 5000)
        assert all(r.timestamp is None for r in got)  # magic 0
        assert c.poll(0.2) == []
        assert c.position(TP) == 5000
        assert c.highwater(TP) == 5000


def test_poll_honours_max_records_and_iteration_stops_on_timeout(broker: BrokerProcess) -> None:
    produce(broker, TOPIC, 300)
    with Consumer(
        broker.bootstrap, auto_offset_reset="earliest", max_poll_records=40, consumer_timeout_ms=300
    ) as c:
        c.assign([TP])
        first = consume(c, 1)
        assert [r.offset for r in first] == [0]
        batch = c.poll(10)
        assert 1 <= len(batch) <= 40 and batch[0].offset == 1
        rest = list(c)
        assert [r.offset for r in first + batch + rest] == list(range(300))


def test_seek_and_position(broker: BrokerProcess) -> None:
    produce(broker, TOPIC, 1000)
    # Small fetches: while the test seeks, fetches of the old position are in flight.
    with Consumer(broker.bootstrap, auto_offset_reset="earliest", max_partition_fetch_bytes=4096) as c:
        c.assign([TP])
        assert c.position(TP) == 0
        assert [r.offset for r in consume(c, 10)] == list(range(10))
        assert c.position(TP) == 10
        c.seek(TP, 500)  # buffered and in-flight data of the old position are dropped
        assert c.position(TP) == 500
        assert triples(consume(c, 100)) == expected(500, 600)
        for target in (3, 900, 40, 650, 41):
            c.seek(TP, target)
            assert triples(consume(c, 5)) == expected(target, target + 5)
        c.seek_to_end(TP)
        assert c.position(TP) == 1000
        assert c.poll(0.3) == []  # caught up: a fetch at 1000 now waits in the broker
        c.seek(TP, 7)
        produce(broker, TOPIC, 5, start=1000)  # answers that fetch, which belongs to the old position
        assert triples(consume(c, 5)) == expected(7, 12)
        c.seek_to_beginning()
        assert c.position(TP) == 0
        assert triples(consume(c, 1005)) == expected(0, 1005)
        with pytest.raises(IllegalStateError):
            c.seek(TopicPartition("other", 0), 1)
        assert c.beginning_offsets([TP]) == {TP: 0}
        assert c.end_offsets([TP]) == {TP: 1005}


@pytest.mark.parametrize("reset", ["earliest", "latest", "error"])
def test_auto_offset_reset(broker: BrokerProcess, reset: str) -> None:
    produce(broker, TOPIC, 100)
    with Consumer(broker.bootstrap, auto_offset_reset=reset) as c:
        c.assign([TP])
        if reset == "earliest":
            assert c.position(TP) == 0
            assert consume(c, 1)[0].offset == 0
        elif reset == "latest":
            assert c.position(TP) == 100
            assert c.poll(0.3) == []
            produce(broker, TOPIC, 1, start=100)
            assert triples(consume(c, 1)) == expected(100, 101)
        else:
            with pytest.raises(OffsetOutOfRangeError, match="events-0"):
                c.poll(5)
            with pytest.raises(OffsetOutOfRangeError):
                c.position(TP)
        # A position beyond the log: reset per policy, or an error naming the partition.
        c.seek(TP, 10_000)
        if reset == "error":
            with pytest.raises(OffsetOutOfRangeError, match=r"10000 of events-0"):
                consume(c, 1)
            with pytest.raises(OffsetOutOfRangeError):  # sticky until the consumer seeks
                c.poll(0)
            c.seek(TP, 99)
            assert triples(consume(c, 1)) == expected(99, 100)
        elif reset == "earliest":
            assert consume(c, 1)[0].offset == 0
        else:
            deadline = time.monotonic() + 10
            while c.position(TP) == 10_000:  # until the fetch has met the end of the log
                assert time.monotonic() < deadline and c.poll(0.1) == []
            assert c.position(TP) == 101
            produce(broker, TOPIC, 1, start=101)
            assert consume(c, 1)[0].offset == 101


def test_multi_partition_topic_consumed_in_order(make_broker: Callable[..., BrokerProcess]) -> None:
    broker = make_broker("num.partitions=3")
    n = 6000
    with Producer(broker.bootstrap, batch_size=4096) as p:
        futures = [p.send("m", b"value-%d" % i, key=b"k%d" % i) for i in range(n)]
        p.flush(30)
        where = {(f.get(0).partition, f.get(0).offset): b"value-%d" % i for i, f in enumerate(futures)}
    with Consumer(broker.bootstrap, auto_offset_reset="earliest", max_partition_fetch_bytes=8192) as c:
        assert c.partitions_for_topic("m") == {0, 1, 2}
        assert "m" in c.topics()
        c.assign([TopicPartition("m", i) for i in range(3)])
        got = consume(c, n)
    by_partition: dict[int, list[int]] = {0: [], 1: [], 2: []}
    for r in got:
        by_partition[r.partition].append(r.offset)
        assert where[(r.partition, r.offset)] == r.value
    for offsets in by_partition.values():
        assert offsets and offsets == list(range(len(offsets)))  # per-partition order, no gaps
    assert len(got) == len(where) == n
    # Partitions are served in turn: all three appear early, not one after another.
    assert {r.partition for r in got[: n // 2]} == {0, 1, 2}


def test_reassign_keeps_the_positions_of_kept_partitions(broker: BrokerProcess) -> None:
    produce(broker, TOPIC, 100)
    other = TopicPartition("other-topic", 0)
    with Producer(broker.bootstrap) as p:
        for i in range(10):
            p.send(other.topic, _value(i), key=_key(i), partition=0)
        p.flush(10)
    with Consumer(broker.bootstrap, auto_offset_reset="earliest") as c:
        c.assign([TP])
        assert triples(consume(c, 30)) == expected(0, 30)
        c.assign([TP, other])
        assert c.assignment() == {TP, other}
        assert c.position(TP) == 30
        got = consume(c, 80)
        assert triples([r for r in got if r.topic == TOPIC]) == expected(30, 100)
        assert triples([r for r in got if r.topic == other.topic]) == expected(0, 10, other.topic)
        c.assign([other])
        with pytest.raises(IllegalStateError):
            c.position(TP)
        c.unsubscribe()
        assert c.assignment() == set()
        with pytest.raises(IllegalStateError):
            c.poll(0)


def test_deserializers(broker: BrokerProcess) -> None:
    with Producer(broker.bootstrap) as p:
        p.send(TOPIC, json.dumps({"n": 1}).encode(), key=b"one", partition=0)
        p.send(TOPIC, None, key=None, partition=0)  # a tombstone stays None
        p.flush(10)
    with Consumer(
        broker.bootstrap,
        auto_offset_reset="earliest",
        key_deserializer=bytes.decode,
        value_deserializer=json.loads,
    ) as c:
        c.assign([TP])
        got = consume(c, 2)
    assert [(r.key, r.value) for r in got] == [("one", {"n": 1}), (None, None)]


def test_message_larger_than_max_partition_fetch_bytes_is_a_clear_error(broker: BrokerProcess) -> None:
    with Producer(broker.bootstrap, api_version=(0, 8, 2)) as p:
        p.send(TOPIC, b"small", partition=0)
        p.send(TOPIC, b"x" * 5000, partition=0)
        p.flush(10)
    # Fetch v0-2: Fetch v3+ returns an oversized first batch anyway (KIP-74)
    with Consumer(
        broker.bootstrap, auto_offset_reset="earliest", max_partition_fetch_bytes=1000, api_version=(0, 8, 2)
    ) as c:
        c.assign([TP])
        assert [r.value for r in consume(c, 1)] == [b"small"]
        with pytest.raises(MessageTooLargeError, match="max_partition_fetch_bytes=1000"):
            consume(c, 1, timeout=10)


def test_nothing_hangs_without_a_broker(tmp_path: Any) -> None:
    from broker_process import free_port

    start = time.monotonic()
    with Consumer(f"127.0.0.1:{free_port()}", request_timeout_ms=1000, auto_offset_reset="earliest") as c:
        c.assign([TP])
        assert c.poll(0.5) == []
        with pytest.raises(KafkaError):
            c.position(TP)
    assert time.monotonic() - start < 15


def test_long_poll_returns_promptly_when_data_arrives(broker: BrokerProcess) -> None:
    produce(broker, TOPIC, 1)
    with Consumer(broker.bootstrap, auto_offset_reset="latest", fetch_max_wait_ms=10_000) as c:
        c.assign([TP])
        assert c.position(TP) == 1
        assert c.poll(0.5) == []  # caught up: a fetch now waits in the broker for up to 10 s
        produced = time.monotonic()
        produce(broker, TOPIC, 1, start=1)
        got = consume(c, 1, timeout=15)
        assert triples(got) == expected(1, 2)
        assert time.monotonic() - produced < 3, "the broker's long-poll did not wake on the append"


# --------------------------------------------------------------------------- group offsets


def test_commit_committed_and_resume_also_after_a_broker_restart(process_broker: BrokerProcess) -> None:
    broker = process_broker
    produce(broker, TOPIC, 200)
    manual = {"group_id": "g", "enable_auto_commit": False}
    with Consumer(broker.bootstrap, auto_offset_reset="earliest", **manual) as c:
        c.assign([TP])
        assert c.committed(TP) is None
        assert triples(consume(c, 60)) == expected(0, 60)
        c.commit()
        assert c.committed(TP) == 60  # the next record to consume
        c.commit({TP: OffsetAndMetadata(70, "meta")})
        assert c.committed(TP) == 70
    with Consumer(broker.bootstrap, auto_offset_reset="latest", **manual) as c:
        c.assign([TP])
        assert c.position(TP) == 70
        assert triples(consume(c, 10)) == expected(70, 80)
        c.commit()
    broker.stop()
    broker.restart()
    with Consumer(broker.bootstrap, group_id="g", auto_offset_reset="latest") as c:
        c.assign([TP])
        assert c.committed(TP) == 80
        assert triples(consume(c, 120)) == expected(80, 200)
        # close() commits the position (enable_auto_commit) ...
    produce(broker, TOPIC, 3, start=200)
    with Consumer(broker.bootstrap, **manual) as c:
        assert c.committed(TP) == 200
        c.assign([TP])
        assert next(iter(c)).offset == 200
        c.commit()  # ... and iteration advances the position per record handed out, not per batch
        assert c.committed(TP) == 201


def test_commit_needs_a_group(broker: BrokerProcess) -> None:
    with Consumer(broker.bootstrap) as c:
        c.assign([TP])
        with pytest.raises(IllegalStateError):
            c.commit({TP: 1})
        with pytest.raises(IllegalStateError):
            c.committed(TP)


def test_auto_commit_runs_on_its_interval(broker: BrokerProcess) -> None:
    produce(broker, TOPIC, 50)
    with (
        Consumer(
            broker.bootstrap, group_id="auto", auto_offset_reset="earliest", auto_commit_interval_ms=100
        ) as c,
        Consumer(broker.bootstrap, group_id="auto") as observer,
    ):
        c.assign([TP])
        consume(c, 50)
        deadline = time.monotonic() + 10
        while observer.committed(TP) != 50:
            assert time.monotonic() < deadline, "auto-commit did not store the position"


def test_commit_async_callback(broker: BrokerProcess) -> None:
    produce(broker, TOPIC, 10)
    results: list[tuple[dict[TopicPartition, OffsetAndMetadata], BaseException | None, str]] = []
    done = threading.Event()

    def callback(offsets: dict[TopicPartition, OffsetAndMetadata], error: BaseException | None) -> None:
        results.append((offsets, error, threading.current_thread().name))
        done.set()

    with Consumer(
        broker.bootstrap,
        group_id="ga",
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        request_timeout_ms=2000,
    ) as c:
        c.assign([TP])
        consume(c, 7)
        c.commit_async(callback=callback)
        assert done.wait(10)
        assert results == [({TP: OffsetAndMetadata(7)}, None, "hmb-consumer-io")]
        assert c.committed(TP) == 7
        done.clear()
        c.commit_async({TopicPartition("no-such-topic", 0): 1}, callback)
        assert done.wait(10)
        assert isinstance(results[-1][1], UnknownTopicOrPartitionError)


# --------------------------------------------------------------------------- failures


def test_broker_killed_mid_poll_consumption_resumes_without_loss_or_duplicates(
    process_broker: BrokerProcess,
) -> None:
    broker = process_broker
    first, second = 3000, 2000
    produce(broker, TOPIC, first)
    got: list[ConsumerRecord] = []
    halfway = threading.Event()
    back = threading.Event()
    errors: list[BaseException] = []

    def crash_and_recover() -> None:
        try:
            halfway.wait(30)
            broker.kill()
            broker.restart()
            back.set()
            produce(broker, TOPIC, second, start=first)
        except BaseException as exc:  # reported to the test thread
            errors.append(exc)
            back.set()

    with Consumer(
        broker.bootstrap,
        auto_offset_reset="earliest",
        max_partition_fetch_bytes=16384,
        reconnect_backoff_max_ms=200,
    ) as c:
        c.assign([TP])
        threading.Thread(target=crash_and_recover, daemon=True).start()
        deadline = time.monotonic() + 60
        slowest = 0.0
        while len(got) < first + second and not errors:
            assert time.monotonic() < deadline, f"stuck at {len(got)} records"
            started = time.monotonic()
            got += c.poll(0.5, max_records=100)
            slowest = max(slowest, time.monotonic() - started)
            if len(got) >= 1000:
                halfway.set()  # the broker dies while this loop keeps polling
    assert not errors, errors
    assert back.is_set()
    assert slowest < 2.0, "poll() must keep to its timeout while the broker is away"
    assert triples(got) == expected(0, first + second)


# --------------------------------------------------------------------------- compression, interop


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4"])
def test_compressed_messages_from_librdkafka(broker: BrokerProcess, codec: str) -> None:
    n = 3000
    p = ck.Producer(
        {
            "bootstrap.servers": broker.bootstrap,
            **LEGACY,
            "compression.codec": codec,
            "linger.ms": 20,
            "batch.size": 16384,
        }
    )
    topic = f"zipped-{codec}"
    for i in range(n):
        p.produce(topic, _value(i), key=_key(i), partition=0)
    assert p.flush(30) == 0
    tp = TopicPartition(topic, 0)
    with Consumer(broker.bootstrap, auto_offset_reset="earliest") as c:
        c.assign([tp])
        assert triples(consume(c, n)) == expected(0, n, topic)
        c.seek(tp, 1234)  # inside a compressed wrapper: the earlier inner records are skipped
        assert triples(consume(c, 10)) == expected(1234, 1244, topic)


def test_hmb_producer_to_kafka_python_and_librdkafka(broker: BrokerProcess) -> None:
    n = 2000
    produce(broker, TOPIC, n)
    kc = kafka.KafkaConsumer(
        bootstrap_servers=broker.bootstrap,
        api_version=(0, 8, 2),
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    )
    kc.assign([kafka.TopicPartition(TOPIC, 0)])
    seen: list[Any] = []
    deadline = time.monotonic() + 30
    while len(seen) < n and time.monotonic() < deadline:
        for batch in kc.poll(timeout_ms=500).values():
            seen += batch
    kc.close()
    assert [(TOPIC, 0, m.offset, m.key, m.value) for m in seen] == expected(0, n)

    rc = ck.Consumer(
        {"bootstrap.servers": broker.bootstrap, **LEGACY, "group.id": "v", "enable.auto.commit": False}
    )
    rc.assign([ck.TopicPartition(TOPIC, 0, 0)])
    msgs: list[Any] = []
    deadline = time.monotonic() + 30
    while len(msgs) < n and time.monotonic() < deadline:
        for m in rc.consume(1000, 0.5):
            assert not m.error(), m.error()
            msgs.append(m)
    rc.close()
    assert [(TOPIC, 0, m.offset(), m.key(), m.value()) for m in msgs] == expected(0, n)


def test_kafka_python_and_librdkafka_producers_to_hmb_consumer(broker: BrokerProcess) -> None:
    n = 2000
    kp = kafka.KafkaProducer(bootstrap_servers=broker.bootstrap, api_version=(0, 8, 2))
    for i in range(n):
        kp.send("kp", value=_value(i), key=_key(i), partition=0)
    kp.flush()
    kp.close()
    rp = ck.Producer({"bootstrap.servers": broker.bootstrap, **LEGACY, "linger.ms": 5})
    for i in range(n):
        rp.produce("rk", _value(i), key=_key(i), partition=0)
    assert rp.flush(30) == 0
    with Consumer(broker.bootstrap, auto_offset_reset="earliest") as c:
        c.assign([TopicPartition("kp", 0), TopicPartition("rk", 0)])
        got = consume(c, 2 * n)
    assert triples([r for r in got if r.topic == "kp"]) == expected(0, n, "kp")
    assert triples([r for r in got if r.topic == "rk"]) == expected(0, n, "rk")


def test_a_topic_made_again_is_read_through_its_new_id(broker: BrokerProcess) -> None:
    """Fetch v13+ names the topic by the id the metadata gave; once the topic is deleted and
    made again, that id is UNKNOWN_TOPIC_ID: the consumer refreshes its metadata and reads the
    new topic (its old position is out of range there: reset to earliest)."""
    produce(broker, "reborn", 5)
    with Consumer(broker.bootstrap, auto_offset_reset="earliest") as c:
        c.assign([TopicPartition("reborn", 0)])
        assert triples(consume(c, 5)) == expected(0, 5, "reborn")
        with Admin(broker.bootstrap) as admin:
            admin.delete_topic("reborn")
            admin.create_topic("reborn", 1)
        produce(broker, "reborn", 3, start=100)
        got = consume(c, 3)
        assert [(r.offset, r.value) for r in got] == [(i, _value(100 + i)) for i in range(3)]
