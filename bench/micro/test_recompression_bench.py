"""Micro-benchmark of compression.type: what recompressing a produced batch costs the broker.

What, in the same run: the broker's validation of one 16 KiB lz4 batch of 100 records
(``assign_batches``: framing, header checks, CRC-32C, offsets; what a topic with
``compression.type=producer`` pays) against the same plus recompression into
``uncompressed``, gzip, snappy and zstd (``recompress_batches``: decompress, compress,
CRC-32C; what a topic with that codec pays, in a worker thread).  The ratio to the
``producer`` row is the cost; the ratio, not the absolute time, is what to compare.

Run: ``.venv/bin/pytest bench/micro/test_recompression_bench.py --benchmark-enable
--benchmark-only``.  A plain ``pytest`` run (benchmarks disabled, one call each) checks
that every recompressed batch reads back equal.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from kproto.records import Compression, RecordBatchBuilder, assign_batches, read_record_batches
from kproto.records.recompress import recompress_batches

TS = 1_700_000_000_000


def _batch() -> bytes:
    builder = RecordBatchBuilder(Compression.LZ4)
    for i in range(100):  # half random, half repeated: compresses like typical JSON-ish payloads
        builder.append(b"key-%d" % i, os.urandom(80) + b"x" * 80, TS + i)
    return builder.build()


BATCH = _batch()
EXPECTED = read_record_batches(BATCH)
TARGETS = {"producer": None, "uncompressed": 0, "gzip": 1, "snappy": 2, "zstd": 4}


def _append_path(target: int | None) -> bytes | bytearray:
    buf = assign_batches(BATCH, 1000).buf
    return buf if target is None else recompress_batches(buf, target)


@pytest.mark.parametrize("compression_type", list(TARGETS))
def test_append_path(benchmark: Any, compression_type: str) -> None:
    out = benchmark(_append_path, TARGETS[compression_type])
    assert [r[1:] for r in read_record_batches(out)] == [r[1:] for r in EXPECTED]
