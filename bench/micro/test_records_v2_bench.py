"""Micro-benchmarks of the magic-2 RecordBatch codec against kafka-python, and the broker path.

What, in the same run:

* build: one batch of 1000 records (uncompressed, 100-byte random values, keys either 10
  bytes or null): kproto ``RecordBatchBuilder`` vs kafka-python
  ``DefaultRecordBatchBuilder`` (append every record, then build the bytes; the outputs
  are byte-identical, asserted);
* read: kproto ``read_record_batches`` vs iterating kafka-python's ``DefaultRecordBatch``
  (``MemoryRecords``), keys and values materialised;
* the broker hot path ``assign_offsets_any`` on 16 KiB uncompressed batches (framing, header
  checks, CRC-32C, baseOffset patch): one batch per call (a produce request for one
  partition) and 64 batches per call (1 MiB), reported as batches/s and MB/s.

Goals: build and read well ahead of kafka-python; at least 50,000 batches/s for
``assign_offsets_any``.  Every benchmark asserts its result, so a plain ``pytest`` run
(benchmarks disabled, one call each) doubles as a correctness test.

Run: ``.venv/bin/pytest bench/micro/test_records_v2_bench.py --benchmark-enable
--benchmark-only``; results are in bench/results/kproto-micro.md ("RecordBatch v2").
"""

from __future__ import annotations

from typing import Any

import pytest
from kafka.record.default_records import DefaultRecordBatchBuilder
from micro_data import VALUES, N, kafka_read

from kproto.records import RecordBatchBuilder, assign_offsets_any, read_record_batches

TS = 1_700_000_000_000


def kproto_build(keys: list[bytes | None]) -> bytes:
    builder = RecordBatchBuilder()
    append = builder.append
    for key, value in zip(keys, VALUES, strict=True):
        append(key, value, TS)
    return builder.build(partition_leader_epoch=0)  # kafka-python writes epoch 0


def kafka_build(keys: list[bytes | None]) -> bytes:
    builder = DefaultRecordBatchBuilder(2, 0, False, -1, -1, -1, 1 << 30)
    append = builder.append
    for i, (key, value) in enumerate(zip(keys, VALUES, strict=True)):
        append(i, TS, key, value, [])
    return bytes(builder.build())


def _check(data: bytes, keys: list[bytes | None]) -> None:
    records = read_record_batches(data)
    assert len(records) == N
    assert records[-1].offset == N - 1 and records[-1].key == keys[-1]
    assert records[-1].value == VALUES[-1]


@pytest.mark.benchmark(group="v2 build 1000 x 100 B")
def test_build_kproto(benchmark: Any, keys: list[bytes | None]) -> None:
    data = benchmark(kproto_build, keys)
    assert data == kafka_build(keys)  # byte-identical to kafka-python
    _check(data, keys)


@pytest.mark.benchmark(group="v2 build 1000 x 100 B")
def test_build_kafka_python(benchmark: Any, keys: list[bytes | None]) -> None:
    data = benchmark(kafka_build, keys)
    _check(data, keys)


@pytest.mark.benchmark(group="v2 read 1000 x 100 B")
def test_read_kproto(benchmark: Any, keys: list[bytes | None]) -> None:
    data = kproto_build(keys)
    records = benchmark(read_record_batches, data)
    assert len(records) == N and records[10].key == keys[10] and records[10].value == VALUES[10]


@pytest.mark.benchmark(group="v2 read 1000 x 100 B")
def test_read_kafka_python(benchmark: Any, keys: list[bytes | None]) -> None:
    data = kproto_build(keys)
    records = benchmark(kafka_read, data)
    assert len(records) == N and records[10].key == keys[10] and records[10].value == VALUES[10]


def batch_16k() -> bytes:
    """An uncompressed batch of 10-byte keys and 100-byte values, as close to 16 KiB as fits."""

    def build(n: int) -> bytes:
        builder = RecordBatchBuilder(producer_id=1, producer_epoch=0, base_sequence=0)
        for i in range(n):
            builder.append(b"key-%06d" % i, VALUES[i], TS + i)
        return builder.build()

    n = 130
    while len(build(n + 1)) <= 16 * 1024:
        n += 1
    return build(n)


@pytest.mark.benchmark(group="assign_offsets_any 16 KiB batches")
@pytest.mark.parametrize("batches", [1, 64])
def test_assign_offsets_any(benchmark: Any, batches: int) -> None:
    one = batch_16k()
    buf = bytearray(one * batches)
    result = benchmark(assign_offsets_any, buf, 1_000_000)
    count = batches * read_record_batches(one)[-1].offset + batches
    assert result.buf is buf
    assert (result.count, result.last_offset) == (count, 1_000_000 + count - 1)
    offsets = [r.offset for r in read_record_batches(buf)]
    assert offsets == list(range(1_000_000, 1_000_000 + count))
    stats = getattr(benchmark, "stats", None)
    if stats is not None:  # None when benchmarks are disabled (plain pytest run)
        for name, seconds in (("min", stats.stats.min), ("median", stats.stats.median)):
            benchmark.extra_info[f"batches_per_s_{name}"] = round(batches / seconds)
            benchmark.extra_info[f"MB_per_s_{name}"] = round(len(buf) / seconds / 1e6)
