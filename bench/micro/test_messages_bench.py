"""Micro-benchmarks of kproto's message grammars against kafka-python's JSON-driven codec.

What: on two large flexible responses, compare in the same run kproto's
``encode_response``/``decode_response`` (compiled Construct grammars) with
kafka-python 3's ``kafka.protocol`` classes (code generated from the same JSON
specs), whole frames (size, header, body) both ways:

* a Metadata v12 response: 3 brokers, 100 topics of 10 partitions each
  (replicas and ISR of 3, topic ids, no tagged fields set);
* a Fetch v16 response: 50 partitions in 5 topics, each with a 1 KiB record
  set (kept as bytes by both codecs).

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

import kproto

METADATA_V = 12
FETCH_V = 16


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
    }


def _fetch_body() -> dict[str, Any]:
    records = os.urandom(1024)
    return {
        "throttle_time_ms": 0,
        "error_code": 0,
        "session_id": 0,
        "responses": [
            {
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
            for _ in range(5)
        ],
    }


CASES = {
    "metadata": (3, METADATA_V, MetadataResponse, _metadata_body()),
    "fetch": (1, FETCH_V, FetchResponse, _fetch_body()),
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
    top = "topics" if key == 3 else "responses"
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
