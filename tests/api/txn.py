"""Requests of the transaction APIs, as a transactional producer sends them, for the API tests.

Each builder fills every field of the newest version it is used with
(kproto leaves out what an older version lacks).  ``Txn`` is one producer
instance: its transactional id, producer id and epoch after InitProducerId.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kproto import ApiKey, ErrorCode

from .bodies import batch, metadata_body, produce_body
from .harness import InProcessBroker

TIMEOUT_MS = 60_000


@dataclass
class Txn:
    b: InProcessBroker
    tid: str
    producer_id: int
    epoch: int
    sequence: int = 0

    async def add(self, topic: str, *partitions: int, version: int = 3) -> dict[tuple[str, int], int]:
        return await add_partitions(
            self.b, self.tid, self.producer_id, self.epoch, topic, partitions or (0,), version
        )

    async def add_offsets(self, group: str, version: int = 4) -> int:
        body = {"transactional_id": self.tid, "producer_id": self.producer_id, "producer_epoch": self.epoch}
        resp = await self.b.request(ApiKey.ADD_OFFSETS_TO_TXN, version, {**body, "group_id": group})
        return int(resp.error_code)

    async def end(self, commit: bool, version: int = 4) -> int:
        return await end_txn(self.b, self.tid, self.producer_id, self.epoch, commit, version)

    def records(self, values: list[bytes]) -> bytes:
        """A transactional batch of this producer with the next sequence numbers."""
        records = batch(
            values, producer_id=self.producer_id, epoch=self.epoch, sequence=self.sequence, transactional=True
        )
        self.sequence += len(values)
        return records

    async def produce(self, topic: str, values: list[bytes], partition: int = 0, version: int = 8) -> Any:
        """Produce a transactional batch: the partition's answer."""
        body = produce_body(topic, self.records(values), partition=partition)
        body["transactional_id"] = self.tid
        resp = await self.b.request(ApiKey.PRODUCE, version, body)
        return resp.responses[0].partition_responses[0]


def init_body(
    tid: str | None,
    timeout_ms: int = TIMEOUT_MS,
    producer_id: int = -1,
    epoch: int = -1,
    enable2_pc: bool = False,
    keep_prepared_txn: bool = False,
) -> dict[str, Any]:
    return {
        "transactional_id": tid,
        "transaction_timeout_ms": timeout_ms,
        "producer_id": producer_id,
        "producer_epoch": epoch,
        "enable2_pc": enable2_pc,
        "keep_prepared_txn": keep_prepared_txn,
    }


async def init(b: InProcessBroker, tid: str, version: int = 4, **kw: Any) -> Any:
    """InitProducerId for ``tid``: the whole answer."""
    return await b.request(ApiKey.INIT_PRODUCER_ID, version, init_body(tid, **kw))


async def producer(b: InProcessBroker, tid: str, version: int = 4, **kw: Any) -> Txn:
    """A producer instance of ``tid`` (asserts that InitProducerId succeeded)."""
    resp = await init(b, tid, version, **kw)
    assert resp.error_code == ErrorCode.NONE, ErrorCode(resp.error_code).name
    return Txn(b, tid, int(resp.producer_id), int(resp.producer_epoch))


async def add_partitions(
    b: InProcessBroker, tid: str, pid: int, epoch: int, topic: str, partitions: Any, version: int = 3
) -> dict[tuple[str, int], int]:
    """AddPartitionsToTxn v0-v3: each partition's code."""
    body = {
        "v3_and_below_transactional_id": tid,
        "v3_and_below_producer_id": pid,
        "v3_and_below_producer_epoch": epoch,
        "v3_and_below_topics": [{"name": topic, "partitions": list(partitions)}],
    }
    resp = await b.request(ApiKey.ADD_PARTITIONS_TO_TXN, version, body)
    return {
        (t.name, p.partition_index): int(p.partition_error_code)
        for t in resp.results_by_topic_v3_and_below
        for p in t.results_by_partition
    }


async def end_txn(b: InProcessBroker, tid: str, pid: int, epoch: int, commit: bool, version: int = 4) -> int:
    body = {"transactional_id": tid, "producer_id": pid, "producer_epoch": epoch, "committed": commit}
    return int((await b.request(ApiKey.END_TXN, version, body)).error_code)


async def describe(b: InProcessBroker, tid: str) -> Any:
    resp = await b.request(ApiKey.DESCRIBE_TRANSACTIONS, 0, {"transactional_ids": [tid]})
    return resp.transaction_states[0]


async def topic(b: InProcessBroker, name: str, partitions: int = 1) -> None:
    """Create ``name`` (auto-creation through Metadata) with ``partitions`` partitions."""
    if partitions != 1:
        body = {
            "topics": [
                {
                    "name": name,
                    "num_partitions": partitions,
                    "replication_factor": 1,
                    "assignments": [],
                    "configs": [],
                }
            ],
            "timeout_ms": 1000,
            "validate_only": False,
        }
        resp = await b.request(ApiKey.CREATE_TOPICS, 4, body)
        assert resp.topics[0].error_code == ErrorCode.NONE
    else:
        await b.request(ApiKey.METADATA, 1, metadata_body(name))
