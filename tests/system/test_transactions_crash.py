"""A transaction open when the broker dies (``kill -9``) stays open after the restart.

The broker process is killed; the partition then holds what a transactional
producer had written before the crash (appended through the log as the
broker appends it, the files never closed); the restarted broker must
rebuild the open transaction from the log: read_committed fetches stop at
its first offset (nothing of it is half-visible), read_uncommitted ones see
it, and DescribeProducers names where it began.  The coordinator then
completes or aborts it; that part is its own tests'.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import trio
from broker_process import BrokerProcess
from wire import WireClient, produce_body

from hmb.log.config import LogConfig
from hmb.log.partition import PartitionLog
from kproto import ApiKey, ErrorCode
from kproto.records import RecordBatchBuilder, read_records

PID = 77


def one_batch(value: bytes, *, transactional: bool = False) -> bytes:
    if transactional:
        b = RecordBatchBuilder(producer_id=PID, producer_epoch=0, base_sequence=0, is_transactional=True)
    else:
        b = RecordBatchBuilder()
    b.append(None, value)
    if transactional:
        b.append(None, value + b"-2")
    return b.build()


def fetch(c: WireClient, topic: str, isolation_level: int) -> Any:
    partition = {
        "partition": 0,
        "current_leader_epoch": -1,
        "fetch_offset": 0,
        "log_start_offset": -1,
        "partition_max_bytes": 1 << 20,
    }
    body = {
        "replica_id": -1,
        "max_wait_ms": 0,
        "min_bytes": 0,
        "max_bytes": 1 << 20,
        "isolation_level": isolation_level,
        "session_id": 0,
        "session_epoch": -1,
        "topics": [{"topic": topic, "partitions": [partition]}],
        "forgotten_topics_data": [],
        "rack_id": "",
    }
    return c.request(ApiKey.FETCH, 11, body).responses[0].partitions[0]


def test_a_transaction_open_at_a_crash_stays_open(make_broker: Any, tmp_path: Path) -> None:
    data = tmp_path / "txn-crash"
    b: BrokerProcess = make_broker(data_dir=data)
    with WireClient(b.bootstrap) as c:
        c.request(ApiKey.METADATA, 4, {"topics": [{"name": "tc"}], "allow_auto_topic_creation": True})
        body = {"transactional_id": None, **produce_body("tc", 0, one_batch(b"before"))}
        resp = c.request(ApiKey.PRODUCE, 8, body)
        assert resp.responses[0].partition_responses[0].error_code == ErrorCode.NONE
    b.kill()

    async def producer_died_mid_transaction() -> None:
        plog = PartitionLog.open(data / "tc-0", "tc", 0, LogConfig(), clean=False)
        await plog.append(one_batch(b"txn", transactional=True))  # offsets 1-2, never committed
        await plog.append(one_batch(b"after"))  # 3
        for seg in plog.segments.values():  # the files as a dead process leaves them: no snapshot
            seg.close()

    trio.run(producer_died_mid_transaction)
    b.restart()
    with WireClient(b.bootstrap) as c:
        committed = fetch(c, "tc", 1)
        assert (committed.error_code, committed.high_watermark, committed.last_stable_offset) == (0, 4, 1)
        assert [r.value for r in read_records(committed.records)] == [b"before"]
        everything = fetch(c, "tc", 0)
        assert everything.last_stable_offset == 1
        assert [r.value for r in read_records(everything.records)] == [b"before", b"txn", b"txn-2", b"after"]
        body = {"topics": [{"name": "tc", "partition_indexes": [0]}]}
        producers = c.request(ApiKey.DESCRIBE_PRODUCERS, 0, body).topics[0].partitions[0].active_producers
        assert [(p.producer_id, p.current_txn_start_offset) for p in producers] == [(PID, 1)]
