"""InitProducerId v0-v1 in process: producer ids for idempotent producers, never reused.

v0 and v1 have the same layout (v1 only marks throttling); a null
transactional id gets a fresh id with epoch 0, a transactional one
NOT_COORDINATOR (no transactions here).  What can fail: an id handed out
twice, across a restart, or below an id already in the log; a disk that
cannot persist the id block answered with an id anyway.
"""

from __future__ import annotations

from typing import Any

import pytest

from hmb.log.meta import ProducerIdManager
from kproto import ApiKey, ErrorCode

from .bodies import batch, new_producer_id, produce_one
from .harness import InProcessBroker

INIT_PID = ApiKey.INIT_PRODUCER_ID


@pytest.mark.parametrize("version", [0, 1])
async def test_fresh_ids_and_no_transactions(broker: InProcessBroker, version: int) -> None:
    ids = [await new_producer_id(broker, version) for _ in range(3)]
    assert ids == [ids[0], ids[0] + 1, ids[0] + 2]
    body = {"transactional_id": "tx-1", "transaction_timeout_ms": 60000}
    resp = await broker.request(INIT_PID, version, body)
    assert resp.error_code == ErrorCode.NOT_COORDINATOR and resp.producer_id == -1
    assert (resp.producer_epoch, resp.throttle_time_ms) == (-1, 0)


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
