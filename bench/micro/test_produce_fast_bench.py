"""Micro-benchmarks of the producer's half of the Produce fast path: v12 (names) against v13 (ids).

What: :func:`kproto.produce_fast.encode_produce_request` of a request carrying
one 16 KiB batch (the producer's default ``batch_size``) and of one carrying
four (four topics), and the decoding of the answer to the one-topic request
(``produce_acks``, named back from the ids at v13 as the producer does), each at
v12, where topics go by name, and at v13, where they go by their 16-byte id.

Why: the producer sends v13 wherever the broker serves it and the metadata gave
every topic id; naming topics by id must not cost the producer's I/O thread
anything (the goal: v13 within 5 % of v12 in the same run, compare the rows of a
group).  Every benchmark asserts its result against the grammar, so ``pytest``
(benchmarks disabled, one call) doubles as a correctness test.

Run: ``.venv/bin/pytest bench/micro/test_produce_fast_bench.py --benchmark-enable
--benchmark-only``.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

import kproto
from kproto.produce_fast import FIRST_TOPIC_ID, encode_produce_request, encode_produce_response, produce_acks

BATCH = os.urandom(16 * 1024)
TOPICS = {f"topic-{i}": bytes([i + 1]) * 16 for i in range(4)}
VERSIONS = (FIRST_TOPIC_ID - 1, FIRST_TOPIC_ID)


def _topics(version: int, count: int) -> list[tuple[str | bytes, list[tuple[int, bytes | None]]]]:
    names = list(TOPICS)[:count]
    return [(TOPICS[n] if version >= FIRST_TOPIC_ID else n, [(0, BATCH)]) for n in names]


@pytest.mark.parametrize("count", [1, 4])
@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.benchmark(group="encode produce request")
def test_encode_request(benchmark: Any, version: int, count: int) -> None:
    topics = _topics(version, count)
    frame = benchmark(encode_produce_request, version, 7, "hmb-client", 1, 30_000, topics)
    body = kproto.decode_request(frame).body
    assert [len(t.partition_data[0].records) for t in body.topic_data] == [len(BATCH)] * count


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.benchmark(group="decode produce answer")
def test_decode_answer(benchmark: Any, version: int) -> None:
    [(topic, _)] = _topics(version, 1)
    frame = encode_produce_response(version, 7, [(topic, [(0, 0, 100, 0)])])
    names = {topic_id: name for name, topic_id in TOPICS.items()} if version >= FIRST_TOPIC_ID else None
    [ack] = benchmark(produce_acks, version, frame, names)
    assert (ack.topic, ack.partition, ack.base_offset) == ("topic-0", 0, 100)
