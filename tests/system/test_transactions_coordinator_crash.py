"""Transactions across ``kill -9`` of the broker process, coordinator included: never half visible.

A committed transaction stays committed after the crash (its markers were
in the log before the commit returned); a transaction open when the broker
died stays invisible to read_committed readers after the restart, until
the producer's next instance initialises the transactional id, which
aborts it, and its own committed records then follow the earlier ones.
(The log's side alone, without the coordinator: ``test_transactions_crash.py``.)
"""

from __future__ import annotations

import time

from broker_process import BrokerProcess

from hmb_client import Consumer, Producer
from hmb_client.structs import TopicPartition

TP = TopicPartition("crash-txn", 0)


def _read(bootstrap: str, isolation: str, expected: int, timeout: float = 15) -> list[bytes]:
    """Partition 0's values from the start, until ``expected`` came or nothing more does."""
    with Consumer(bootstrap, auto_offset_reset="earliest", isolation_level=isolation) as c:
        c.assign([TP])
        got: list[bytes] = []
        deadline = time.monotonic() + timeout
        while len(got) < expected and time.monotonic() < deadline:
            got += [r.value for r in c.poll(0.2) if r.value is not None]
        more = c.poll(0.5)  # nothing past what was expected
        return got + [r.value for r in more if r.value is not None]


def test_an_open_transaction_is_aborted_after_a_crash_and_never_seen(broker: BrokerProcess) -> None:
    committed = [b"before-%d" % i for i in range(5)]
    in_flight = [b"lost-%d" % i for i in range(10)]
    with Producer(broker.bootstrap, transactional_id="crash-tx") as p:
        p.init_transactions()
        p.begin_transaction()
        for v in committed:
            p.send("crash-txn", v, partition=0)
        p.commit_transaction()
        p.begin_transaction()
        for v in in_flight:
            p.send("crash-txn", v, partition=0)
        p.flush()  # in the broker's log, the transaction still open
        broker.kill()
    broker.restart()
    assert _read(broker.bootstrap, "read_committed", len(committed)) == committed
    after = [b"after-%d" % i for i in range(3)]
    with Producer(broker.bootstrap, transactional_id="crash-tx") as p:
        p.init_transactions()  # the next instance: the open transaction is aborted
        p.begin_transaction()
        for v in after:
            p.send("crash-txn", v, partition=0)
        p.commit_transaction()
    assert _read(broker.bootstrap, "read_committed", 8) == committed + after
    assert _read(broker.bootstrap, "read_uncommitted", 18) == committed + in_flight + after
