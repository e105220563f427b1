"""Transactional producers and read_committed consumers of real clients against the broker process.

librdkafka (confluent-kafka), kafka-python and aiokafka each write three
transactions to one partition -- committed, aborted, committed -- and a
read_committed consumer must see exactly the committed records, in order,
never an aborted one, while a read_uncommitted consumer sees all of them.
A second producer instance with the same transactional id fences the first
(a zombie): its commit fails and nothing it wrote becomes visible.  A
consume-transform-produce step commits its input offsets in its
transaction: they appear in the group only when the transaction commits.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from broker_process import BrokerProcess

pytestmark = pytest.mark.interop

ck = pytest.importorskip("confluent_kafka")

QUIET = {"log_level": 3}
ROUNDS = ((True, 40), (False, 25), (True, 30))  # (commit?, records) per transaction


def _values(writer: str) -> list[tuple[bool, list[bytes]]]:
    """Each transaction's outcome and values: ``<writer>-<txn>-<i>``."""
    return [
        (commit, [b"%s-%d-%d" % (writer.encode(), t, i) for i in range(n)])
        for t, (commit, n) in enumerate(ROUNDS)
    ]


def _committed(writer: str) -> list[bytes]:
    return [v for commit, values in _values(writer) if commit for v in values]


def _everything(writer: str) -> list[bytes]:
    return [v for _commit, values in _values(writer) for v in values]


def _read(bootstrap: str, topic: str, isolation: str, expected: int, timeout: float = 30) -> list[bytes]:
    """The values of partition 0, read by librdkafka with ``isolation``, up to the high watermark."""
    c = ck.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"read-{isolation}",
            "enable.auto.commit": False,
            "isolation.level": isolation,
            "enable.partition.eof": True,
            **QUIET,
        }
    )
    try:
        c.assign([ck.TopicPartition(topic, 0, 0)])
        got: list[bytes] = []
        deadline = time.monotonic() + timeout
        at_end = False
        while time.monotonic() < deadline and not (at_end and len(got) >= expected):
            for m in c.consume(500, 0.2):
                if m.error():
                    assert m.error().code() == ck.KafkaError._PARTITION_EOF, m.error()
                    at_end = True
                    continue
                got.append(m.value())
        return got
    finally:
        c.close()


def _check_isolation(bootstrap: str, topic: str, writer: str) -> None:
    committed = _read(bootstrap, topic, "read_committed", len(_committed(writer)))
    assert committed == _committed(writer)  # in order, no aborted record
    assert _read(bootstrap, topic, "read_uncommitted", len(_everything(writer))) == _everything(writer)


def _ck_producer(bootstrap: str, tid: str) -> Any:
    p = ck.Producer({"bootstrap.servers": bootstrap, "transactional.id": tid, "linger.ms": 2, **QUIET})
    p.init_transactions(30)
    return p


def test_confluent_transactions_and_isolation(broker: BrokerProcess) -> None:
    p = _ck_producer(broker.bootstrap, "ck-tx")
    for commit, values in _values("ck"):
        p.begin_transaction()
        for v in values:
            p.produce("ck-txn", v, partition=0)
        if commit:
            p.commit_transaction(30)
        else:
            assert p.flush(30) == 0  # on the broker, so that there is something to abort
            p.abort_transaction(30)
    _check_isolation(broker.bootstrap, "ck-txn", "ck")


def test_kafka_python_transactional_producer(broker: BrokerProcess) -> None:
    from kafka import KafkaProducer

    p = KafkaProducer(bootstrap_servers=broker.bootstrap, transactional_id="kp-tx")
    try:
        p.init_transactions()
        for commit, values in _values("kp"):
            p.begin_transaction()
            for v in values:
                p.send("kp-txn", v, partition=0)
            if commit:
                p.commit_transaction()
            else:
                p.flush()
                p.abort_transaction()
    finally:
        p.close()
    _check_isolation(broker.bootstrap, "kp-txn", "kp")


def test_aiokafka_transactional_producer(broker: BrokerProcess) -> None:
    aiokafka = pytest.importorskip("aiokafka")

    async def produce() -> None:
        p = aiokafka.AIOKafkaProducer(bootstrap_servers=broker.bootstrap, transactional_id="aio-tx")
        await p.start()
        try:
            for commit, values in _values("aio"):
                await p.begin_transaction()
                for v in values:
                    await p.send_and_wait("aio-txn", v, partition=0)
                if commit:
                    await p.commit_transaction()
                else:
                    await p.abort_transaction()
        finally:
            await p.stop()

    asyncio.run(produce())
    _check_isolation(broker.bootstrap, "aio-txn", "aio")


def test_a_zombie_is_fenced_and_its_records_never_visible(broker: BrokerProcess) -> None:
    zombie = _ck_producer(broker.bootstrap, "fence-tx")
    zombie.begin_transaction()
    zombie.produce("fence-txn", b"zombie", partition=0)
    assert zombie.flush(30) == 0
    successor = _ck_producer(broker.bootstrap, "fence-tx")  # aborts the zombie's open transaction
    successor.begin_transaction()
    successor.produce("fence-txn", b"successor", partition=0)
    successor.commit_transaction(30)
    with pytest.raises(ck.KafkaException) as failed:
        zombie.commit_transaction(30)
    assert failed.value.args[0].fatal() or failed.value.args[0].code() in (
        ck.KafkaError._FENCED,
        ck.KafkaError.PRODUCER_FENCED,
        ck.KafkaError.INVALID_PRODUCER_EPOCH,
    )
    assert _read(broker.bootstrap, "fence-txn", "read_committed", 1) == [b"successor"]


def test_offsets_commit_with_the_transaction(broker: BrokerProcess) -> None:
    """consume-transform-produce: the input's offsets are the group's only once the output commits."""
    admin_p = ck.Producer({"bootstrap.servers": broker.bootstrap, **QUIET})
    for i in range(10):
        admin_p.produce("ctp-in", b"in-%d" % i, partition=0)
    assert admin_p.flush(30) == 0

    consumer = ck.Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": "ctp",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            "isolation.level": "read_committed",
            **QUIET,
        }
    )
    p = _ck_producer(broker.bootstrap, "ctp-tx")
    try:
        consumer.subscribe(["ctp-in"])
        got: list[Any] = []
        deadline = time.monotonic() + 30
        while len(got) < 10 and time.monotonic() < deadline:
            got += [m for m in consumer.consume(10, 0.5) if not m.error()]
        assert len(got) == 10
        for abort_first in (True, False):
            p.begin_transaction()
            for m in got:
                p.produce("ctp-out", m.value().replace(b"in", b"out"), partition=0)
            p.send_offsets_to_transaction(
                [ck.TopicPartition("ctp-in", 0, 10)], consumer.consumer_group_metadata(), 30
            )
            if abort_first:
                p.abort_transaction(30)
                [tp] = consumer.committed([ck.TopicPartition("ctp-in", 0)], 10)
                assert tp.offset < 0  # the aborted transaction committed nothing
            else:
                p.commit_transaction(30)
        [tp] = consumer.committed([ck.TopicPartition("ctp-in", 0)], 10)
        assert tp.offset == 10
    finally:
        consumer.close()
    assert _read(broker.bootstrap, "ctp-out", "read_committed", 10) == [b"out-%d" % i for i in range(10)]
