"""Micro-benchmarks of kproto's message grammars against kafka-python's JSON-driven codec.

What: on three large responses, compare in the same run kproto's
``encode_response``/``decode_response`` (compiled Construct grammars) with
kafka-python 3's ``kafka.protocol`` classes (code generated from the same JSON
specs), whole frames (size, header, body) both ways, each at a classic
version and at flexible ones (the case names say which, ``metadata-v12``):

* a Metadata response (v1, v9, v12): 3 brokers, 100 topics of 10 partitions
  each (replicas and ISR of 3, topic ids where the version has them, no
  tagged fields set);
* a Fetch response (v11, v12, v16): 50 partitions in 5 topics, each with a
  1 KiB record set (kept as bytes by both codecs);
* a Produce response (v8, v9, v11, v13): 50 partitions in 5 topics.

Why: a modern client sends Metadata with every refresh and reads Fetch
responses continuously; the goal is kproto at least 3x faster than
kafka-python on both.  Every benchmark also asserts its result (the frames
are byte-identical), so ``pytest`` (benchmarks disabled, one call) doubles
as a correctness test.

Run: ``.venv/bin/pytest bench/micro/test_messages_bench.py --benchmark-enable
--benchmark-only``; results are in bench/results/kproto-micro.md.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from kafka.protocol.consumer.fetch import FetchResponse
from kafka.protocol.metadata.metadata import MetadataResponse
from kafka.protocol.producer import ProduceResponse

import kproto
from kproto import ApiKey

METADATA_VERSIONS = (1, 9, 12)
FETCH_VERSIONS = (11, 12, 16)
PRODUCE_VERSIONS = (8, 9, 11, 13)


def _metadata_body() -> dict[str, Any]:
    brokers = [{"node_id": i, "host": f"broker-{i}.example", "port": 9092, "rack": None} for i in range(3)]
    topics = [
        {
            "error_code": 0,
            "name": f"topic-{t:03d}",
            "topic_id": os.urandom(16),
            "is_internal": False,
            "partitions": [
                {
                    "error_code": 0,
                    "partition_index": p,
                    "leader_id": p % 3,
                    "leader_epoch": 7,
                    "replica_nodes": [p % 3, (p + 1) % 3, (p + 2) % 3],
                    "isr_nodes": [p % 3, (p + 1) % 3, (p + 2) % 3],
                    "offline_replicas": [],
                }
                for p in range(10)
            ],
            "topic_authorized_operations": -(2**31),
        }
        for t in range(100)
    ]
    return {
        "throttle_time_ms": 0,
        "brokers": brokers,
        "cluster_id": "cluster-0",
        "controller_id": 0,
        "topics": topics,
        "cluster_authorized_operations": -(2**31),  # v8-v10
    }


def _fetch_body() -> dict[str, Any]:
    records = os.urandom(1024)
    return {
        "throttle_time_ms": 0,
        "error_code": 0,
        "session_id": 0,
        "responses": [
            {
                "topic": f"topic-{t}",
                "topic_id": os.urandom(16),
                "partitions": [
                    {
                        "partition_index": p,
                        "error_code": 0,
                        "high_watermark": 1000 + p,
                        "last_stable_offset": 1000 + p,
                        "log_start_offset": 0,
                        "aborted_transactions": [],
                        "preferred_read_replica": -1,
                        "records": records,
                    }
                    for p in range(10)
                ],
            }
            for t in range(5)
        ],
    }


def _produce_body() -> dict[str, Any]:
    return {
        "throttle_time_ms": 0,
        "responses": [
            {
                "name": f"topic-{t}",
                "topic_id": os.urandom(16),
                "partition_responses": [
                    {
                        "index": p,
                        "error_code": 0,
                        "base_offset": 1000 * p,
                        "log_append_time_ms": -1,
                        "log_start_offset": 0,
                        "record_errors": [],
                        "error_message": None,
                    }
                    for p in range(10)
                ],
            }
            for t in range(5)
        ],
    }


CASES = {
    **{f"metadata-v{v}": (3, v, MetadataResponse, _metadata_body()) for v in METADATA_VERSIONS},
    **{f"fetch-v{v}": (1, v, FetchResponse, _fetch_body()) for v in FETCH_VERSIONS},
    **{f"produce-v{v}": (0, v, ProduceResponse, _produce_body()) for v in PRODUCE_VERSIONS},
}
FRAMES = {name: kproto.encode_response(key, v, 42, body) for name, (key, v, _, body) in CASES.items()}


def _kafka_decode(cls: Any, version: int, frame: bytes) -> Any:
    return cls[version].decode(frame, header=True, framed=True)


def _kafka_encode(message: Any) -> bytes:
    return bytes(message.encode(header=True, framed=True))


@pytest.fixture(params=sorted(CASES))
def case(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.mark.benchmark(group="decode response")
def test_decode_kproto(benchmark: Any, case: str) -> None:
    key, version, _, body = CASES[case]
    decoded = benchmark(kproto.decode_response, key, version, FRAMES[case])
    assert decoded.correlation_id == 42
    assert kproto.encode_response(key, version, 42, decoded.body) == FRAMES[case]
    top = "topics" if key == ApiKey.METADATA else "responses"
    assert len(decoded.body[top]) == len(body[top])


@pytest.mark.benchmark(group="decode response")
def test_decode_kafka_python(benchmark: Any, case: str) -> None:
    _, version, cls, _ = CASES[case]
    decoded = benchmark(_kafka_decode, cls, version, FRAMES[case])
    decoded.with_header(correlation_id=42)
    assert _kafka_encode(decoded) == FRAMES[case]  # byte-identical to kproto


@pytest.mark.benchmark(group="encode response")
def test_encode_kproto(benchmark: Any, case: str) -> None:
    key, version, _, body = CASES[case]
    assert benchmark(kproto.encode_response, key, version, 42, body) == FRAMES[case]


@pytest.mark.benchmark(group="encode response")
def test_encode_kafka_python(benchmark: Any, case: str) -> None:
    _, version, cls, _ = CASES[case]
    message = _kafka_decode(cls, version, FRAMES[case])
    message.with_header(correlation_id=42)
    assert benchmark(_kafka_encode, message) == FRAMES[case]
