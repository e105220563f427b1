"""Micro-benchmarks of the magic 0/1 MessageSet codec against kafka-python.

What: on one 1000-record MessageSet (magic 0, uncompressed, 100-byte values, keys either
10 bytes or null), compare in the same run

* build: kproto ``MessageSetBuilder`` vs kafka-python ``LegacyRecordBatchBuilder``
  (append every record, then build the bytes);
* read: kproto ``read_message_set`` vs iterating kafka-python's ``LegacyRecordBatch``
  (``MemoryRecords``) into record objects, keys and values materialised;
* the broker hot path ``assign_offsets`` (validate framing + CRCs, patch offsets), in
  messages per second, for magic 0 and magic 1.

Why: the broker's throughput on old clients is bounded by these loops; the goal is kproto
at least 3x faster than kafka-python and at least 1M messages/s for assign_offsets.
Every benchmark also asserts its result, so ``pytest`` (benchmarks disabled, one call)
doubles as a correctness test.

Run: ``.venv/bin/pytest bench/micro --benchmark-enable --benchmark-only``; results are
in bench/results/kproto-micro.md.
"""

from __future__ import annotations

from typing import Any

import pytest
from kafka.record.legacy_records import LegacyRecordBatchBuilder
from micro_data import VALUES, N, kafka_read

from kproto.records import MessageSetBuilder, assign_offsets, build_message_set, read_message_set


def kproto_build(keys: list[bytes | None], magic: int = 0) -> bytes:
    builder = MessageSetBuilder(magic)
    append = builder.append
    for key, value in zip(keys, VALUES, strict=True):
        append(key, value, 1_700_000_000_000)
    return builder.build()


def kafka_build(keys: list[bytes | None]) -> bytes:
    builder = LegacyRecordBatchBuilder(0, 0, 1 << 30)
    append = builder.append
    for i, (key, value) in enumerate(zip(keys, VALUES, strict=True)):
        append(i, None, key, value)
    return bytes(builder.build())


def _check(data: bytes, keys: list[bytes | None]) -> None:
    records = read_message_set(data)
    assert len(records) == N
    assert records[-1].offset == N - 1 and records[-1].key == keys[-1]
    assert records[-1].value == VALUES[-1]


@pytest.mark.benchmark(group="build 1000 x 100 B, magic 0")
def test_build_kproto(benchmark: Any, keys: list[bytes | None]) -> None:
    data = benchmark(kproto_build, keys)
    assert data == kafka_build(keys)  # byte-identical to kafka-python
    _check(data, keys)


@pytest.mark.benchmark(group="build 1000 x 100 B, magic 0")
def test_build_kafka_python(benchmark: Any, keys: list[bytes | None]) -> None:
    data = benchmark(kafka_build, keys)
    _check(data, keys)


@pytest.mark.benchmark(group="read 1000 x 100 B, magic 0")
def test_read_kproto(benchmark: Any, keys: list[bytes | None]) -> None:
    data = kproto_build(keys)
    records = benchmark(read_message_set, data)
    assert len(records) == N and records[10].key == keys[10] and records[10].value == VALUES[10]


@pytest.mark.benchmark(group="read 1000 x 100 B, magic 0")
def test_read_kafka_python(benchmark: Any, keys: list[bytes | None]) -> None:
    data = kproto_build(keys)
    records = benchmark(kafka_read, data)
    assert len(records) == N and records[10].key == keys[10] and records[10].value == VALUES[10]


@pytest.mark.benchmark(group="assign_offsets 1000 x 100 B")
@pytest.mark.parametrize("magic", [0, 1])
def test_assign_offsets(benchmark: Any, keys: list[bytes | None], magic: int) -> None:
    buf = bytearray(build_message_set(zip(keys, VALUES, strict=True), magic=magic))
    result = benchmark(assign_offsets, buf, 1_000_000)
    assert result.buf is buf
    assert (result.count, result.last_offset) == (N, 1_000_000 + N - 1)
    records = read_message_set(buf)
    assert [r.offset for r in records] == list(range(1_000_000, 1_000_000 + N))
    stats = getattr(benchmark, "stats", None)
    if stats is not None:  # None when benchmarks are disabled (plain pytest run)
        benchmark.extra_info["messages_per_s_min"] = round(N / stats.stats.min)
        benchmark.extra_info["messages_per_s_median"] = round(N / stats.stats.median)
