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

The cases and the messages are ``bench.kproto_codec``'s, whose own run
(``python -m bench.kproto_codec``) interleaves both codecs in rounds, which a
shared machine's drift disturbs less than pytest-benchmark's one group after
another.

Run: ``.venv/bin/pytest bench/micro/test_messages_bench.py --benchmark-enable
--benchmark-only``; results are in bench/results/kproto-micro.md and
bench/results/kproto-decode-2026-11-26.md.
"""

from __future__ import annotations

from typing import Any

import pytest

import kproto
from bench.kproto_codec import CASES, FRAMES, kafka_decode, kafka_encode
from kproto import ApiKey


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
    decoded = benchmark(kafka_decode, cls, version, FRAMES[case])
    decoded.with_header(correlation_id=42)
    assert kafka_encode(decoded) == FRAMES[case]  # byte-identical to kproto


@pytest.mark.benchmark(group="encode response")
def test_encode_kproto(benchmark: Any, case: str) -> None:
    key, version, _, body = CASES[case]
    assert benchmark(kproto.encode_response, key, version, 42, body) == FRAMES[case]


@pytest.mark.benchmark(group="encode response")
def test_encode_kafka_python(benchmark: Any, case: str) -> None:
    _, version, cls, _ = CASES[case]
    message = kafka_decode(cls, version, FRAMES[case])
    message.with_header(correlation_id=42)
    assert benchmark(kafka_encode, message) == FRAMES[case]
