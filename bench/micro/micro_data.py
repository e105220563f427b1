"""The workload both record-format benchmarks share: 1000 records of 100-byte
values, keys of 10 bytes or null, and kafka-python's reader for either format."""

from __future__ import annotations

import os
from typing import Any

import kafka.record as kafka_records

N = 1000
VALUES = [os.urandom(100) for _ in range(N)]
KEYS: dict[str, list[bytes | None]] = {
    "key10": [b"key-%06d" % i for i in range(N)],  # 10-byte keys
    "nullkey": [None] * N,
}


def kafka_read(data: bytes) -> list[Any]:
    """Every record of ``data`` through kafka-python's MemoryRecords (any magic)."""
    records = kafka_records.MemoryRecords(data)
    out: list[Any] = []
    while (batch := records.next_batch()) is not None:
        out.extend(batch)
    return out
