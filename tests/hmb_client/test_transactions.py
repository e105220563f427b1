"""hmb_client's transactional producer and read_committed consumer, against the broker in process.

Three transactions (committed, aborted, committed): a read_committed
consumer gets the committed records in order and nothing of the aborted
one, a read_uncommitted one gets all; offsets sent to a transaction are
the group's only once it commits; a second instance fences the first.
Against hmb, which finalizes ``transaction.version`` 2, all of it runs on
the second transaction protocol (Produce v12+, here v13 as the producer knows the
topic's id, EndTxn v5, TxnOffsetCommit v5).
What can fail: aborted records visible, a transaction's partitions not
added before its batches (the broker refuses those), a zombie that keeps
writing.
"""

from __future__ import annotations

import time

import pytest
from broker_process import InProcessBroker

from hmb_client import Consumer, Producer
from hmb_client.errors import KafkaError
from hmb_client.producer.transactions import ProducerFencedError, TransactionAbortableError
from hmb_client.structs import TopicPartition
from kproto import ApiKey

TP = TopicPartition("hc-txn", 0)


def _read(bootstrap: str, isolation: str, expected: int, tp: TopicPartition = TP) -> list[bytes]:
    with Consumer(bootstrap, auto_offset_reset="earliest", isolation_level=isolation) as c:
        c.assign([tp])
        got: list[bytes] = []
        deadline = time.monotonic() + 20
        while len(got) < expected and time.monotonic() < deadline:
            got += [r.value for r in c.poll(0.2) if r.value is not None]
        return got


def test_commit_abort_and_isolation(in_process_broker: InProcessBroker) -> None:
    bootstrap = in_process_broker.bootstrap
    rounds = [(True, [b"a%d" % i for i in range(20)]), (False, [b"b%d" % i for i in range(15)])]
    rounds.append((True, [b"c%d" % i for i in range(10)]))
    with Producer(bootstrap, transactional_id="hc-tx") as p:
        with pytest.raises(KafkaError):
            p.send("hc-txn", b"outside", partition=0)  # no transaction open
        p.init_transactions()
        for commit, values in rounds:
            p.begin_transaction()
            for v in values:
                p.send("hc-txn", v, partition=0)
            if commit:
                p.commit_transaction()
            else:
                p.abort_transaction()
    committed = [v for c, values in rounds if c for v in values]
    everything = [v for _c, values in rounds for v in values]
    assert _read(bootstrap, "read_committed", len(committed)) == committed
    assert _read(bootstrap, "read_uncommitted", len(everything)) == everything
    # hmb finalizes transaction.version 2: the client adds no partition itself (KIP-890 part 2)
    sent: dict[int, set[int]] = {}
    for r in in_process_broker.requests():
        sent.setdefault(r["api_key"], set()).add(r["version"])
    assert (sent[ApiKey.PRODUCE], sent[ApiKey.END_TXN]) == ({13}, {5})
    assert ApiKey.ADD_PARTITIONS_TO_TXN not in sent


def test_a_transaction_with_an_undelivered_record_does_not_commit(in_process_broker: InProcessBroker) -> None:
    """A batch of the transaction failed: commit refuses (the transaction stays open for the
    abort), so no committed transaction ever lacks one of its records."""
    broker, topic = in_process_broker, "hc-undelivered"
    with Producer(broker.bootstrap, transactional_id="hc-undelivered") as p:
        p.init_transactions()
        p.begin_transaction()
        p.send(topic, b"delivered", partition=0).get(10)
        broker.inject("PRODUCE", error="INVALID_RECORD", topic=topic)  # not retriable: the batch fails
        with pytest.raises(KafkaError):
            p.send(topic, b"undelivered", partition=0).get(10)
        with pytest.raises(TransactionAbortableError, match="not delivered"):
            p.commit_transaction()
        p.abort_transaction()
        p.begin_transaction()
        for v in (b"delivered", b"undelivered"):  # what the application does: send them again
            p.send(topic, v, partition=0)
        p.commit_transaction()
    tp = TopicPartition(topic, 0)
    assert _read(broker.bootstrap, "read_committed", 2, tp) == [b"delivered", b"undelivered"]


def test_offsets_and_fencing(in_process_broker: InProcessBroker) -> None:
    bootstrap = in_process_broker.bootstrap
    in_process_broker.create_topic("hc-in")
    zombie = Producer(bootstrap, transactional_id="hc-fence")
    successor = Producer(bootstrap, transactional_id="hc-fence")
    try:
        zombie.init_transactions()
        zombie.begin_transaction()
        zombie.send("hc-txn", b"zombie", partition=0).get(10)
        successor.init_transactions()
        successor.begin_transaction()
        successor.send("hc-txn", b"kept", partition=0)
        successor.send_offsets_to_transaction({("hc-in", 0): 7}, "hc-group")
        with Consumer(bootstrap, group_id="hc-group") as c:
            assert c.committed(TopicPartition("hc-in", 0)) is None  # not before the commit
            successor.commit_transaction()
            assert c.committed(TopicPartition("hc-in", 0)) == 7
        with pytest.raises(ProducerFencedError):
            zombie.commit_transaction()
    finally:
        zombie.close()
        successor.close()
    assert _read(bootstrap, "read_committed", 1) == [b"kept"]
    versions = {
        r["version"] for r in in_process_broker.requests() if r["api_key"] == ApiKey.TXN_OFFSET_COMMIT
    }
    assert versions == {5}  # the group's offsets joined the transaction without AddOffsetsToTxn
    assert all(r["api_key"] != ApiKey.ADD_OFFSETS_TO_TXN for r in in_process_broker.requests())
