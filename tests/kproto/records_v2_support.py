"""What the RecordBatch (magic 2) tests share: an independent encoder for crafted
batches (``raw_batch``/``raw_record``: kafka-python's varint writer and the crc32c
package, not the code under test), kafka-python as the golden reader and writer, and
the strategies and expected values the tests draw on."""

from __future__ import annotations

import struct
from typing import Any

import crc32c
import kafka.record as kafka_records
import kafka.record.default_records as kafka_default
from hypothesis import strategies as st
from kafka.record.util import encode_varint

from kproto.records import (
    Compression,
    DefaultRecord,
    RecordBatchBuilder,
    build_message_set,
)

ALL_CODECS = list(Compression)
TS = 1_700_000_000_000


Rec = tuple[bytes | None, bytes | None, int, tuple[tuple[str, bytes | None], ...]]


def varint_bytes(n: int) -> bytes:
    out = bytearray()
    encode_varint(n, out.append)
    return bytes(out)


def raw_record(
    offset_delta: int,
    key: bytes | None,
    value: bytes | None,
    ts_delta: int = 0,
    headers: tuple[tuple[str, bytes | None], ...] = (),
) -> bytes:
    """Independent reference encoder of one v2 record (length prefix included)."""
    body = b"\x00" + varint_bytes(ts_delta) + varint_bytes(offset_delta)
    for blob in (key, value):
        body += varint_bytes(-1) if blob is None else varint_bytes(len(blob)) + blob
    body += varint_bytes(len(headers))
    for hkey, hvalue in headers:
        body += varint_bytes(len(hkey.encode())) + hkey.encode()
        body += varint_bytes(-1) if hvalue is None else varint_bytes(len(hvalue)) + hvalue
    return varint_bytes(len(body)) + body


def raw_batch(
    payload: bytes,
    count: int,
    *,
    attrs: int = 0,
    lod: int | None = None,
    base_offset: int = 0,
    base_ts: int = TS,
    max_ts: int = TS,
    pid: int = -1,
    epoch: int = -1,
    seq: int = -1,
    ple: int = -1,
) -> bytes:
    """Independent reference encoder of one v2 batch around ``payload`` (correct CRC)."""
    last = count - 1 if lod is None else lod
    tail = struct.pack(">hiqqqhii", attrs, last, base_ts, max_ts, pid, epoch, seq, count) + payload
    return struct.pack(">qiibI", base_offset, len(tail) + 9, ple, 2, crc32c.crc32c(tail)) + tail


def with_new_crc(batch: bytes | bytearray) -> bytes:
    """``batch`` with its CRC recomputed (after a deliberate change inside the CRC)."""
    out = bytearray(batch)
    struct.pack_into(">I", out, 17, crc32c.crc32c(bytes(out[21:])))
    return bytes(out)


def raw_message(offset: int, magic: int, key: bytes | None, value: bytes | None) -> bytes:
    """One uncompressed MessageSet entry (via kproto's legacy builder, tested elsewhere)."""
    return build_message_set([(key, value, TS)], magic=magic, base_offset=offset)


def build(
    records: list[Rec],
    codec: int = 0,
    base_offset: int = 0,
    **kwargs: Any,
) -> bytes:
    ple = kwargs.pop("partition_leader_epoch", -1)
    builder = RecordBatchBuilder(codec, **kwargs)
    for key, value, ts, headers in records:
        builder.append(key, value, ts, headers)
    return builder.build(base_offset, partition_leader_epoch=ple)


def kafka_build(
    records: list[Rec],
    codec: int = 0,
    pid: int = -1,
    epoch: int = -1,
    seq: int = -1,
    transactional: bool = False,
    offsets: list[int] | None = None,
) -> bytes:
    """kafka-python's encoding (base offset 0, partitionLeaderEpoch 0)."""
    builder = kafka_default.DefaultRecordBatchBuilder(2, int(codec), transactional, pid, epoch, seq, 1 << 30)
    for i, (key, value, ts, headers) in enumerate(records):
        offset = i if offsets is None else offsets[i]
        assert builder.append(offset, ts, key, value, list(headers)) is not None
    return bytes(builder.build())


View = tuple[int, int | None, bytes | None, bytes | None, tuple[tuple[str, bytes | None], ...]]


def kafka_read(data: bytes | bytearray) -> list[View]:
    """Every record, any magic, as kafka-python reads them (control records skipped)."""
    records = kafka_records.MemoryRecords(bytes(data))
    out: list[View] = []
    while (batch := records.next_batch()) is not None:
        assert batch.validate_crc()
        if getattr(batch, "is_control_batch", False):
            list(batch)  # must parse
            continue
        for rec in batch:
            assert rec.validate_crc()
            headers = tuple(getattr(rec, "headers", ()))
            out.append((rec.offset, rec.timestamp, rec.key, rec.value, headers))
    return out


def view(records: list[DefaultRecord]) -> list[View]:
    return [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in records]


def expected(records: list[Rec], base: int = 0) -> list[View]:
    return [(base + i, ts, k, v, h) for i, (k, v, ts, h) in enumerate(records)]


blobs = st.none() | st.binary(max_size=64)
header_lists = st.lists(st.tuples(st.text(max_size=8), st.none() | st.binary(max_size=16)), max_size=3).map(
    tuple
)
timestamps = st.integers(min_value=-(2**61), max_value=2**61)  # deltas fit an int64
record_lists = st.lists(st.tuples(blobs, blobs, timestamps, header_lists), min_size=1, max_size=10)

FIXED: list[Rec] = [
    (b"key-0", b"value-0" * 10, TS, ()),
    (None, b"value-1", TS + 1, (("trace", b"abc"), ("empty", b""), ("null", None))),
    (b"", None, TS - 5, ()),
    (b"key-3", b"", TS + 2, (("\u00e9t\u00e9", b"\xff"),)),
    (None, None, TS + 3, ()),
    (b"k" * 300, bytes(range(256)) * 40, TS + 100_000, ()),
]


def control_batch(base_offset: int = 0, commit: bool = True) -> bytes:
    key = struct.pack(">hh", 0, int(commit))
    return build(
        [(key, struct.pack(">hi", 0, 0), TS, ())],
        base_offset=base_offset,
        producer_id=7,
        producer_epoch=0,
        base_sequence=-1,
        is_transactional=True,
        is_control=True,
    )
