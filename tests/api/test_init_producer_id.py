"""InitProducerId in process: producer ids for idempotent producers, never reused.

A null transactional id gets a fresh id with epoch 0 at every version (v2
is flexible, v3 adds the producer id and epoch a client holds, ignored
without a transactional id); transactional ids are
``test_init_producer_id_txn.py``'s.  What can fail: an id handed out
twice, across a restart, or below an id already in the log; a disk that
cannot persist the id block answered with an id anyway.
"""

from __future__ import annotations

from typing import Any

import pytest

from hmb.log.meta import ProducerIdManager
from kproto import ApiKey, ErrorCode

from . import txn
from .bodies import batch, new_producer_id, produce_one
from .harness import InProcessBroker

INIT_PID = ApiKey.INIT_PRODUCER_ID


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4, 5, 6])
async def test_fresh_ids(broker: InProcessBroker, version: int) -> None:
    ids = [await new_producer_id(broker, version) for _ in range(3)]
    assert ids == [ids[0], ids[0] + 1, ids[0] + 2]


async def test_producer_ids_unique_across_clean_restarts(broker: InProcessBroker) -> None:
    seen = [await new_producer_id(broker, v) for v in (0, 1, 1)]
    broker.restart()
    seen += [await new_producer_id(broker) for _ in range(2)]
    assert len(set(seen)) == len(seen), seen
    assert seen == sorted(seen), seen


async def test_producer_id_above_ids_in_the_log_even_without_block_file(make_broker: Any) -> None:
    b = make_broker()
    assert await new_producer_id(b) == 0
    await produce_one(b, "pid-log", batch([b"x"], producer_id=123_456, epoch=0, sequence=0))
    b.close()
    (b.data_dir / "producer-id-block.json").unlink()
    b.restart()
    assert await new_producer_id(b) > 123_456


async def test_no_id_when_the_block_cannot_be_persisted(
    broker: InProcessBroker, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def disk_full(self: ProducerIdManager) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(ProducerIdManager, "allocate", disk_full)
    resp = await broker.request(INIT_PID, 1, {"transactional_id": None, "transaction_timeout_ms": 60000})
    assert (resp.error_code, resp.producer_id) == (ErrorCode.COORDINATOR_NOT_AVAILABLE, -1)


# ---------------------------------------------------------------- transactional ids


@pytest.mark.parametrize("version", [0, 2, 3, 4, 5])
async def test_a_transactional_id_keeps_its_producer_id_and_bumps_the_epoch(
    broker: InProcessBroker, version: int
) -> None:
    first = await txn.init(broker, "tx-1", version)
    assert (first.error_code, first.producer_epoch) == (ErrorCode.NONE, 0)
    again = await txn.init(broker, "tx-1", version)
    assert (again.error_code, again.producer_id, again.producer_epoch) == (0, first.producer_id, 1)
    other = await txn.init(broker, "tx-2", version)
    assert other.producer_id != first.producer_id and other.producer_epoch == 0


async def test_the_epoch_survives_a_restart(broker: InProcessBroker) -> None:
    first = await txn.producer(broker, "tx-r")
    broker.restart()
    again = await txn.producer(broker, "tx-r")
    assert (again.producer_id, again.epoch) == (first.producer_id, 1)
    assert await new_producer_id(broker) != first.producer_id


@pytest.mark.parametrize("timeout_ms", [0, -1, 900_001])
async def test_a_timeout_over_the_maximum_is_refused(broker: InProcessBroker, timeout_ms: int) -> None:
    resp = await txn.init(broker, "tx-t", timeout_ms=timeout_ms)
    assert (resp.error_code, resp.producer_id) == (ErrorCode.INVALID_TRANSACTION_TIMEOUT, -1)
    assert (await txn.init(broker, "tx-t", timeout_ms=900_000)).error_code == ErrorCode.NONE


async def test_the_maximum_timeout_is_a_setting(make_broker: Any) -> None:
    b = make_broker("transaction.max.timeout.ms=1000")
    assert (await txn.init(b, "tx-t", timeout_ms=1001)).error_code == ErrorCode.INVALID_TRANSACTION_TIMEOUT
    assert (await txn.init(b, "tx-t", timeout_ms=1000)).error_code == ErrorCode.NONE


@pytest.mark.parametrize(
    ("version", "fenced"), [(3, ErrorCode.INVALID_PRODUCER_EPOCH), (4, ErrorCode.PRODUCER_FENCED)]
)
async def test_a_client_holding_an_old_epoch_is_fenced(
    broker: InProcessBroker, version: int, fenced: int
) -> None:
    """v3+: the producer id and epoch the client still holds must be the id's current ones."""
    old = await txn.producer(broker, "tx-f")
    await txn.producer(broker, "tx-f")  # a newer instance
    resp = await txn.init(broker, "tx-f", version, producer_id=old.producer_id, epoch=old.epoch)
    assert resp.error_code == fenced
    current = await txn.init(broker, "tx-f", version, producer_id=old.producer_id, epoch=old.epoch + 1)
    assert (current.error_code, current.producer_epoch) == (ErrorCode.NONE, old.epoch + 2)


async def test_a_new_instance_fences_the_previous_one(broker: InProcessBroker) -> None:
    await txn.topic(broker, "fenced")
    zombie = await txn.producer(broker, "tx-z")
    await txn.producer(broker, "tx-z")
    assert await zombie.add("fenced") == {("fenced", 0): ErrorCode.PRODUCER_FENCED}
    assert await zombie.add("fenced", version=1) == {("fenced", 0): ErrorCode.INVALID_PRODUCER_EPOCH}


async def test_v6_two_phase_commit_is_refused_unless_enabled(broker: InProcessBroker) -> None:
    """KIP-939: ``enable2_pc`` needs transaction.two.phase.commit.enable, as in Kafka."""
    refused = await txn.init(broker, "tx-2pc", 6, enable2_pc=True)
    assert (refused.error_code, refused.producer_id) == (ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, -1)
    plain = await txn.init(broker, "tx-2pc", 6)
    assert plain.error_code == ErrorCode.NONE and plain.producer_id >= 0
    assert (plain.ongoing_txn_producer_id, plain.ongoing_txn_producer_epoch) == (-1, -1)
    kept = await txn.init(broker, "tx-2pc", 6, keep_prepared_txn=True)
    assert kept.error_code == ErrorCode.UNSUPPORTED_VERSION  # no prepared transaction is kept here


async def test_v6_a_two_phase_commit_transaction_never_times_out(make_broker: Any) -> None:
    b = make_broker("transaction.two.phase.commit.enable=true")
    await txn.topic(b, "tp")
    p = await txn.producer(b, "tx-2pc", 6, enable2_pc=True, timeout_ms=10_000)
    await p.add("tp")
    assert (await p.produce("tp", [b"prepared"])).error_code == ErrorCode.NONE
    b.broker.clock.advance(7 * 24 * 3600)  # a week: far past any transaction.max.timeout.ms
    await b.broker.services.transactions.expire()
    assert (await txn.describe(b, "tx-2pc")).transaction_state == "Ongoing"
    assert await p.end(True) == ErrorCode.NONE
