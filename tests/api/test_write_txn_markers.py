"""WriteTxnMarkers v1-v2 in process: markers written for tools.

What can fail: a marker to a partition that does not exist reported
written.  Markers that end transactions are in ``test_transactions.py``.
"""

from __future__ import annotations

from typing import Any

import pytest

from kproto import ApiKey, ErrorCode

from .harness import InProcessBroker


def markers_body(
    topic: str, *partitions: int, pid: int = 7, epoch: int = 0, commit: bool = True
) -> dict[str, Any]:
    return {
        "markers": [
            {
                "producer_id": pid,
                "producer_epoch": epoch,
                "transaction_result": commit,
                "topics": [{"name": topic, "partition_indexes": list(partitions)}],
                "coordinator_epoch": 0,
                "transaction_version": 0,
            }
        ]
    }


@pytest.mark.parametrize("version", [1, 2])
async def test_unknown_partitions(broker: InProcessBroker, version: int) -> None:
    resp = await broker.request(ApiKey.WRITE_TXN_MARKERS, version, markers_body("nowhere", 0, 1))
    [marker] = resp.markers
    assert marker.producer_id == 7
    codes = [(p.partition_index, p.error_code) for p in marker.topics[0].partitions]
    assert codes == [(0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION), (1, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)]


async def test_a_marker_ends_the_transaction_and_an_old_epoch_is_refused(broker: InProcessBroker) -> None:
    from . import txn

    await txn.topic(broker, "wm")
    await txn.producer(broker, "tx-wm")
    p = await txn.producer(broker, "tx-wm")  # epoch 1: an older one exists
    await p.add("wm")
    assert (await p.produce("wm", [b"x"])).error_code == ErrorCode.NONE
    plog = broker.broker.logs.get("wm", 0)
    assert plog is not None and plog.last_stable_offset == 0
    body = markers_body("wm", 0, pid=p.producer_id, epoch=p.epoch, commit=False)
    resp = await broker.request(ApiKey.WRITE_TXN_MARKERS, 2, body)
    assert resp.markers[0].topics[0].partitions[0].error_code == ErrorCode.NONE
    assert (plog.high_watermark, plog.last_stable_offset) == (2, 2)
    assert plog.aborted_transactions(0, 2) == [(p.producer_id, 0)]
    stale = markers_body("wm", 0, pid=p.producer_id, epoch=p.epoch - 1)
    resp = await broker.request(ApiKey.WRITE_TXN_MARKERS, 2, stale)
    assert resp.markers[0].topics[0].partitions[0].error_code == ErrorCode.INVALID_PRODUCER_EPOCH
    assert plog.high_watermark == 2  # nothing written


async def test_a_marker_of_no_producer_is_refused(broker: InProcessBroker) -> None:
    from .bodies import make_topic

    await make_topic(broker, "wm-none")
    for pid, epoch, code in (
        (-1, 0, ErrorCode.INVALID_PRODUCER_ID_MAPPING),
        (5, -1, ErrorCode.INVALID_PRODUCER_EPOCH),
    ):
        resp = await broker.request(
            ApiKey.WRITE_TXN_MARKERS, 1, markers_body("wm-none", 0, pid=pid, epoch=epoch)
        )
        assert resp.markers[0].topics[0].partitions[0].error_code == code
    plog = broker.broker.logs.get("wm-none", 0)
    assert plog is not None and plog.high_watermark == 0
