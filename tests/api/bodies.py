"""Request bodies and record sets the API tests share, and the calls that send them.

Each builder fills every field of the newest version it is used with;
kproto ignores the fields an older version does not have, so one body
serves every version of its key.
"""

from __future__ import annotations

from typing import Any

from kproto import ApiKey, ErrorCode
from kproto.records import Compression, RecordBatchBuilder

from .harness import InProcessBroker


def batch(
    values: list[bytes],
    *,
    timestamps: list[int] | None = None,
    compression: Compression = Compression.NONE,
    producer_id: int = -1,
    epoch: int = -1,
    sequence: int = -1,
    transactional: bool = False,
) -> bytes:
    """A RecordBatch (magic 2) of ``values`` with keys ``key-<i>`` and one header each."""
    b = RecordBatchBuilder(compression, producer_id, epoch, sequence, transactional)
    for i, v in enumerate(values):
        b.append(b"key-%d" % i, v, timestamps[i] if timestamps else 1_700_000_000_000 + i, [("h", b"v")])
    return b.build()


def produce_body(topic: str, records: bytes | None, *, partition: int = 0, acks: int = 1) -> dict[str, Any]:
    return {
        "transactional_id": None,
        "acks": acks,
        "timeout_ms": 1000,
        "topic_data": [{"name": topic, "partition_data": [{"index": partition, "records": records}]}],
    }


def metadata_body(*topics: str, auto: bool = True) -> dict[str, Any]:
    return {
        "topics": [{"name": t} for t in topics],
        "allow_auto_topic_creation": auto,
        "include_cluster_authorized_operations": False,
        "include_topic_authorized_operations": False,
    }


def fetch_req(
    topic_offsets: list[tuple[str, int, int]],
    *,
    max_bytes: int = 50 << 20,
    partition_max_bytes: int = 1 << 20,
    max_wait_ms: int = 0,
    min_bytes: int = 0,
    isolation_level: int = 0,
) -> dict[str, Any]:
    topics: dict[str, list[dict[str, Any]]] = {}
    for topic, partition, offset in topic_offsets:
        topics.setdefault(topic, []).append(
            {
                "partition": partition,
                "current_leader_epoch": -1,
                "fetch_offset": offset,
                "log_start_offset": -1,
                "partition_max_bytes": partition_max_bytes,
            }
        )
    return {
        "replica_id": -1,
        "max_wait_ms": max_wait_ms,
        "min_bytes": min_bytes,
        "max_bytes": max_bytes,
        "isolation_level": isolation_level,
        "session_id": 0,
        "session_epoch": -1,
        "topics": [{"topic": t, "partitions": ps} for t, ps in topics.items()],
        "forgotten_topics_data": [],
        "rack_id": "",
    }


async def make_topic(b: InProcessBroker, topic: str) -> None:
    """Create a topic the way clients do: by asking Metadata for it (auto-creation)."""
    md = await b.request(ApiKey.METADATA, 1, metadata_body(topic))
    assert md.topics[0].error_code == ErrorCode.NONE, ErrorCode(md.topics[0].error_code).name


async def produce(
    b: InProcessBroker, topic: str, records: bytes, version: int = 8, *, partition: int = 0, acks: int = 1
) -> Any:
    """Produce to ``topic`` (auto-created first, as clients do): the whole response."""
    await b.request(ApiKey.METADATA, 1, metadata_body(topic))
    return await b.request(
        ApiKey.PRODUCE, version, produce_body(topic, records, partition=partition, acks=acks)
    )


async def produce_one(b: InProcessBroker, topic: str, records: bytes, version: int = 8, **kw: Any) -> Any:
    """Produce to one partition: its answer."""
    resp = await produce(b, topic, records, version, **kw)
    return resp.responses[0].partition_responses[0]


async def fetch_one(b: InProcessBroker, topic: str, offset: int, version: int = 11, **kw: Any) -> Any:
    """Fetch partition 0 of ``topic`` from ``offset``: its answer."""
    resp = await b.request(ApiKey.FETCH, version, fetch_req([(topic, 0, offset)], **kw))
    return resp.responses[0].partitions[0]


async def new_producer_id(b: InProcessBroker, version: int = 1) -> int:
    body = {
        "transactional_id": None,
        "transaction_timeout_ms": 60000,
        "producer_id": -1,
        "producer_epoch": -1,
        "enable2_pc": False,
        "keep_prepared_txn": False,
    }
    resp = await b.request(ApiKey.INIT_PRODUCER_ID, version, body)
    assert resp.error_code == ErrorCode.NONE
    assert resp.producer_epoch == 0
    return int(resp.producer_id)


async def partitions_of(b: InProcessBroker, topic: str) -> int | None:
    """How many partitions ``topic`` has, or None when it does not exist (never creates it)."""
    t = (await b.request(ApiKey.METADATA, 4, metadata_body(topic, auto=False))).topics[0]
    return None if t.error_code else len(t.partitions)


def spec(
    name: str, partitions: int = 1, rf: int = 1, assignments: list[list[int]] | None = None
) -> dict[str, Any]:
    return {
        "name": name,
        "num_partitions": partitions,
        "replication_factor": rf,
        "assignments": [{"partition_index": i, "broker_ids": b} for i, b in enumerate(assignments or [])],
        "configs": [],
    }


async def create(
    b: InProcessBroker, version: int, *topics: dict[str, Any], validate_only: bool = False
) -> dict[str, Any]:
    body = {"topics": list(topics), "timeout_ms": 5000, "validate_only": validate_only}
    resp = await b.request(ApiKey.CREATE_TOPICS, version, body)
    if version >= 2:
        assert resp.throttle_time_ms == 0
    return {t.name: t for t in resp.topics}
