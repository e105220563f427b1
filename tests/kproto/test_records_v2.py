"""Tests of the magic-2 RecordBatch codec, the any-magic broker path and down-conversion.

kafka-python (an independent implementation) provides golden vectors in both directions
and reads what the broker path and the down-converter produce; hypothesis drives round
trips and fuzzing.  Crafted batches are built with the small independent encoder
``_batch``/``_record`` below (kafka-python's varint writer, the crc32c package), not with
the code under test.

kafka-python compresses zstd with the ``zstandard`` package, which is not a test
requirement; when it is missing, the module fixture gives kafka-python cramjam's zstd
(only the codec: the batch framing read and written stays kafka-python's).
"""

from __future__ import annotations

import gzip
import itertools
import struct
from collections.abc import Iterator
from typing import Any

import cramjam
import crc32c
import kafka.codec as kafka_codec
import kafka.record as kafka_records
import kafka.record.default_records as kafka_default
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.record.util import encode_varint
from kproto_strategies import entry_boundaries, mutate

from kproto.errors import CorruptRecordError, EncodeError, KprotoError
from kproto.records import (
    AssignResult,
    BatchAssignResult,
    Compression,
    DefaultRecord,
    ProducerBatch,
    RecordBatchBuilder,
    RecordBatchHeader,
    RecordBatchReader,
    RecordTooLargeError,
    assign_batches,
    assign_offsets,
    assign_offsets_any,
    build_message_set,
    compress,
    decompress,
    downconvert,
    read_message_set,
    read_record_batches,
    read_records,
)

ALL_CODECS = list(Compression)
TS = 1_700_000_000_000


@pytest.fixture(autouse=True, scope="module")
def _kafka_python_zstd() -> Iterator[None]:
    if kafka_codec.has_zstd():
        yield
        return
    with pytest.MonkeyPatch.context() as mp:

        def encode(data: bytes) -> bytes:
            return bytes(cramjam.zstd.compress(bytes(data)))

        def decode(data: bytes) -> bytes:
            return bytes(cramjam.zstd.decompress(bytes(data)))

        mp.setattr(kafka_codec, "has_zstd", lambda: True)
        mp.setattr(kafka_default, "zstd_encode", encode)
        mp.setattr(kafka_default, "zstd_decode", decode)
        yield


# --------------------------------------------------------------------------- helpers

Rec = tuple[bytes | None, bytes | None, int, tuple[tuple[str, bytes | None], ...]]


def _varint(n: int) -> bytes:
    out = bytearray()
    encode_varint(n, out.append)
    return bytes(out)


def _record(
    offset_delta: int,
    key: bytes | None,
    value: bytes | None,
    ts_delta: int = 0,
    headers: tuple[tuple[str, bytes | None], ...] = (),
) -> bytes:
    """Independent reference encoder of one v2 record (length prefix included)."""
    body = b"\x00" + _varint(ts_delta) + _varint(offset_delta)
    for blob in (key, value):
        body += _varint(-1) if blob is None else _varint(len(blob)) + blob
    body += _varint(len(headers))
    for hkey, hvalue in headers:
        body += _varint(len(hkey.encode())) + hkey.encode()
        body += _varint(-1) if hvalue is None else _varint(len(hvalue)) + hvalue
    return _varint(len(body)) + body


def _batch(
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


def _recrc(batch: bytes | bytearray) -> bytes:
    """``batch`` with its CRC recomputed (after a deliberate change inside the CRC)."""
    out = bytearray(batch)
    struct.pack_into(">I", out, 17, crc32c.crc32c(bytes(out[21:])))
    return bytes(out)


def _message(offset: int, magic: int, key: bytes | None, value: bytes | None) -> bytes:
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

# --------------------------------------------------------------------------- round trips


@settings(max_examples=150, deadline=None)
@given(
    codec=st.sampled_from(ALL_CODECS),
    records=record_lists,
    base=st.integers(min_value=0, max_value=2**40),
    producer=st.sampled_from([(-1, -1, -1, False), (0, 0, 0, False), (7, 3, 2**31 - 5, True)]),
    timestamp_type=st.sampled_from([0, 1]),
)
def test_round_trip(
    codec: Compression,
    records: list[Rec],
    base: int,
    producer: tuple[int, int, int, bool],
    timestamp_type: int,
) -> None:
    pid, epoch, seq, txn = producer
    data = build(
        records,
        codec,
        base,
        producer_id=pid,
        producer_epoch=epoch,
        base_sequence=seq,
        is_transactional=txn,
        timestamp_type=timestamp_type,
    )
    got = read_record_batches(data, allow_partial_tail=False)
    want = expected(records, base)
    max_ts = max(r[2] for r in records)
    if timestamp_type:  # LogAppendTime: every record reports maxTimestamp
        want = [(o, max_ts, k, v, h) for o, _, k, v, h in want]
    assert view(got) == want
    (batch,) = list(RecordBatchReader(data, allow_partial_tail=False))
    h = batch.header
    assert (h.base_offset, h.magic, h.compression, h.record_count) == (base, 2, codec, len(records))
    assert (h.producer_id, h.producer_epoch, h.base_sequence, h.is_transactional) == producer
    assert h.timestamp_type == timestamp_type and not h.is_control and not h.has_delete_horizon
    assert (h.base_timestamp, h.max_timestamp) == (records[0][2], max_ts)
    assert h.last_offset == base + len(records) - 1 and h.size == len(data)
    assert batch.records() == got and batch.raw() == data


@pytest.mark.parametrize("codec", ALL_CODECS)
def test_reader_api(codec: Compression) -> None:
    data = build(FIXED, codec) + build(FIXED[:2], codec, base_offset=len(FIXED))
    for arg in (data, bytearray(data), memoryview(data)):
        batches = list(RecordBatchReader(arg))
        assert [b.header.record_count for b in batches] == [len(FIXED), 2]
        assert isinstance(batches[0].header, RecordBatchHeader)
        assert [r for b in batches for r in b] == read_record_batches(arg)
        assert "DefaultRecordBatch(RecordBatchHeader(" in repr(batches[0])
    # Lazy: a corrupt compressed payload is only noticed when the records are asked for.
    if codec != Compression.NONE:
        bad = _batch(b"garbage" * 5, 3, attrs=int(codec))
        (batch,) = list(RecordBatchReader(bad))
        with pytest.raises(CorruptRecordError):
            batch.records()


def test_builder_api() -> None:
    builder = RecordBatchBuilder()
    assert len(builder) == 0 and builder.build() == b""
    builder.append(bytearray(b"k"), memoryview(b"v"))
    builder.append(None, b"x", timestamp=5, headers=[("a", bytearray(b"1"))])
    assert len(builder) == 2
    first, second = read_record_batches(builder.build(base_offset=7))
    assert first.key == b"k" and type(first.key) is bytes and first.timestamp > TS
    assert second == (8, 5, None, b"x", (("a", b"1"),))
    header = next(iter(RecordBatchReader(builder.build())))
    assert header.header.partition_leader_epoch == -1  # Kafka's producer default


@pytest.mark.parametrize(
    ("call", "args"),
    [
        (lambda b, *a: b.append(*a), ("key", b"v")),
        (lambda b, *a: b.append(*a), (None, 5)),
        (lambda b, *a: b.append(*a), (None, b"v", 1.5)),
        (lambda b, *a: b.append(*a), (None, b"v", 2**63)),
        (lambda b, *a: b.append(*a), (None, b"v", 1, [("k",)])),
        (lambda b, *a: b.append(*a), (None, b"v", 1, [(b"k", b"v")])),
        (lambda b, *a: b.append(*a), (None, b"v", 1, [("k", "v")])),
        (lambda b, *a: b.build(*a), (-1,)),
        (lambda b, *a: b.build(*a), (2**63,)),
    ],
)
def test_builder_rejects_bad_arguments(call: Any, args: tuple[Any, ...]) -> None:
    with pytest.raises(EncodeError):
        call(RecordBatchBuilder(), *args)


def test_builder_rejects_far_apart_timestamps_and_bad_epoch() -> None:
    builder = RecordBatchBuilder()
    builder.append(None, b"a", -(2**63))
    builder.append(None, b"b", 2**63 - 1)
    with pytest.raises(EncodeError):
        builder.build()
    with pytest.raises(EncodeError):
        build(FIXED[:1], partition_leader_epoch=2**31)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"compression": 5},
        {"compression": "gzip"},
        {"compression": True},
        {"producer_id": 2**63},
        {"producer_epoch": 2**15},
        {"base_sequence": -(2**31) - 1},
        {"timestamp_type": 2},
        {"is_transactional": True},  # without a producer id
    ],
)
def test_builder_rejects_bad_settings(kwargs: dict[str, Any]) -> None:
    with pytest.raises(EncodeError):
        RecordBatchBuilder(**kwargs)


def test_varint_widths() -> None:
    """Long varints everywhere: 3-byte offset deltas, long keys, 10-byte timestamp deltas."""
    many: list[Rec] = [(None, b"%d" % i, TS + i, ()) for i in range(9000)]
    wide: list[Rec] = [
        (b"k" * 70_000, b"v" * 9000, -(2**62), (("h" * 200, b"x" * 20_000),)),
        (None, b"", 2**62 - 1, tuple((f"h{i}", None) for i in range(70))),
        (b"k" * 64, b"v" * 8191, 0, ()),
        (b"k" * 63, b"v" * 8192, 1, ()),
    ]
    for records in (many, wide):
        data = build(records, partition_leader_epoch=0)
        assert data == kafka_build(records)
        assert view(read_record_batches(data)) == expected(records)


# --------------------------------------------------------------------------- kafka-python


def test_uncompressed_bytes_identical_to_kafka_python() -> None:
    assert build(FIXED, partition_leader_epoch=0) == kafka_build(FIXED)
    ours = build(
        FIXED,
        producer_id=123,
        producer_epoch=4,
        base_sequence=56,
        is_transactional=True,
        partition_leader_epoch=0,
    )
    assert ours == kafka_build(FIXED, pid=123, epoch=4, seq=56, transactional=True)


@pytest.mark.parametrize("codec", ALL_CODECS)
def test_kproto_reads_kafka_python(codec: Compression) -> None:
    data = kafka_build(FIXED, codec, pid=9, epoch=1, seq=0)
    (batch,) = list(RecordBatchReader(data, allow_partial_tail=False))
    assert batch.header.compression == codec  # FIXED compresses: kafka-python kept the codec
    assert (batch.header.producer_id, batch.header.partition_leader_epoch) == (9, 0)
    assert view(batch.records()) == kafka_read(data) == expected(FIXED)


@pytest.mark.parametrize("codec", ALL_CODECS)
def test_kafka_python_reads_kproto(codec: Compression) -> None:
    data = build(FIXED, codec, base_offset=42, producer_id=5, producer_epoch=0, base_sequence=10)
    assert kafka_read(data) == expected(FIXED, 42)
    kbatch = kafka_default.DefaultRecordBatch(data)
    assert kbatch.validate_crc()
    assert (kbatch.compression_type, kbatch.producer_id, kbatch.base_sequence) == (codec, 5, 10)
    assert (kbatch.last_offset, kbatch.max_timestamp) == (42 + len(FIXED) - 1, TS + 100_000)
    if codec != Compression.NONE:  # the same records inside the compression
        theirs = kafka_build(FIXED, codec)
        ours = build(FIXED, codec, partition_leader_epoch=0)
        assert _payload(ours, codec) == _payload(theirs, codec)


def _payload(batch: bytes, codec: int) -> bytes:
    return decompress(codec, batch[61:])


@settings(max_examples=40, deadline=None)
@given(codec=st.sampled_from(ALL_CODECS), records=record_lists)
def test_interop_property(codec: Compression, records: list[Rec]) -> None:
    ours = build(records, codec)
    assert kafka_read(ours) == view(read_record_batches(ours)) == expected(records)
    theirs = kafka_build(records, codec)
    assert kafka_read(theirs) == view(read_record_batches(theirs)) == expected(records)
    if codec == Compression.NONE:
        assert theirs == build(records, partition_leader_epoch=0)


def _extend_build(records: list[Rec], with_headers: bool = True) -> bytes:
    builder = RecordBatchBuilder()
    builder.extend(
        [r[0] for r in records],
        [r[1] for r in records],
        [r[2] for r in records],
        [r[3] for r in records] if with_headers else None,
    )
    return builder.build(partition_leader_epoch=0)


@settings(max_examples=200, deadline=None)
@given(records=record_lists)
def test_extend_columns_is_byte_identical_to_kafka_python(records: list[Rec]) -> None:
    """The producer's column path (and the prefix cache under it) writes what kafka-python
    writes; run many times over one cache, so stale or colliding prefixes would show."""
    assert _extend_build(records) == kafka_build(records)
    no_headers = [(k, v, ts, ()) for k, v, ts, _ in records]
    assert _extend_build(no_headers, with_headers=False) == kafka_build(no_headers)


def test_prefix_cache_is_bounded_and_refills(monkeypatch: pytest.MonkeyPatch) -> None:
    from kproto.records import default_builder

    monkeypatch.setattr(default_builder, "_PREFIXES", {})
    monkeypatch.setattr(default_builder, "_PREFIXES_MAX", 8)
    monkeypatch.setattr(default_builder, "_prefixes_held", 0)
    records: list[Rec] = [(None if i % 3 else b"k", b"v" * i, TS + i % 5, ()) for i in range(40)]
    assert _extend_build(records) == kafka_build(records)
    held = sum(map(len, default_builder._PREFIXES.values()))
    assert held <= 40, "more than the limit or one batch's records"
    assert _extend_build(records) == kafka_build(records)


@st.composite
def uniform_batches(draw: st.DrawFn) -> list[Rec]:
    """What a producer usually sends: one value length, keys all null or all one length,
    one headers shape, timestamps in order (the slice-built path of the builder)."""
    n = draw(st.integers(1, 300))
    value_len = draw(st.sampled_from([0, 1, 100, 200, 8191, 9000]))
    key_len = draw(st.sampled_from([None, 0, 3, 200]))
    headers = draw(st.sampled_from([(), (("trace", b"abc"),)]))
    start = draw(st.integers(0, 2**40))
    steps = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))  # some equal, some apart
    stamps = list(itertools.accumulate(steps, initial=start))[1:]
    return [
        (
            None if key_len is None else bytes([i % 256]) * key_len,
            bytes([(i * 7) % 256]) * value_len,
            stamps[i],
            headers,
        )
        for i in range(n)
    ]


@settings(max_examples=150, deadline=None)
@given(records=uniform_batches())
def test_uniform_batches_take_the_slice_path_and_match_kafka_python(records: list[Rec]) -> None:
    from kproto.records import default_builder

    columns = ([r[0] for r in records], [r[1] for r in records], [r[2] for r in records])
    encode_headers, no_headers = default_builder._encode_headers, default_builder._NO_HEADERS
    headers = [encode_headers(r[3]) if r[3] else no_headers for r in records]
    uniform = default_builder._encode_uniform(*columns, headers)
    key_len = -1 if records[0][0] is None else len(records[0][0])
    if len(records[0][1]) < default_builder._VT or key_len < 0:
        assert uniform is not None, "the producer's usual batch missed the fast path"
        assert uniform == default_builder._encode_each(*columns, headers)[0]
    assert _extend_build(records) == kafka_build(records)


def test_out_of_order_or_mixed_batches_take_the_loop() -> None:
    from kproto.records import default_builder

    def columns(records: list[Rec]) -> tuple[Any, ...]:
        keys, values, stamps = ([r[i] for r in records] for i in range(3))
        return keys, values, stamps, [b"\x00"] * len(records)

    unordered: list[Rec] = [(None, b"ab", TS + 1, ()), (None, b"cd", TS, ())]
    mixed_keys: list[Rec] = [(None, b"ab", TS, ()), (b"k", b"cd", TS, ())]
    tombstone: list[Rec] = [(None, b"ab", TS, ()), (None, None, TS, ())]
    sizes: list[Rec] = [(None, b"ab", TS, ()), (None, b"c", TS, ())]
    for records in (unordered, mixed_keys, tombstone, sizes):
        assert default_builder._encode_uniform(*columns(records)) is None
        assert _extend_build(records) == kafka_build(records)


@pytest.mark.parametrize(
    "columns",
    [
        ([None], ["text"], [TS], None),  # a str value
        ([1], [b"v"], [TS], None),  # an int key
        ([None], [b"v"], [1.5], None),  # a float timestamp
        ([None], [b"v"], [2**63], None),  # past int64
        ([None, None], [b"v"], [TS], None),  # columns of different lengths
        ([None], [b"v"], [TS], [[("h", "not bytes")]]),
    ],
)
def test_extend_rejects_what_append_rejects(columns: tuple[Any, ...]) -> None:
    with pytest.raises(EncodeError):
        RecordBatchBuilder().extend(*columns)


def test_extend_copies_bytearray_and_memoryview() -> None:
    builder = RecordBatchBuilder()
    key, value = bytearray(b"k"), memoryview(b"value")
    builder.extend([key], [value], [TS])
    key[0] = ord("x")  # changing the caller's buffer later must not change the batch
    assert view(read_record_batches(builder.build())) == [(0, TS, b"k", b"value", ())]


def test_compacted_batch_offsets() -> None:
    """A batch with offset gaps (what log compaction leaves) reads with the true offsets."""
    data = kafka_build(FIXED[:3], offsets=[0, 3, 7])
    assert [r.offset for r in read_record_batches(data)] == [0, 3, 7]
    assert [r[0] for r in kafka_read(data)] == [0, 3, 7]


def test_log_append_time_and_delete_horizon() -> None:
    payload = _record(0, None, b"a", 0) + _record(1, None, b"b", 5)
    data = _batch(payload, 2, attrs=0x08 | 0x40, base_ts=100, max_ts=999)
    header = next(iter(RecordBatchReader(data))).header
    assert header.timestamp_type == 1 and header.has_delete_horizon
    assert [r.timestamp for r in read_record_batches(data)] == [999, 999]
    assert [r[1] for r in kafka_read(data)] == [999, 999]


# --------------------------------------------------------------------------- control batches


def _control_batch(base_offset: int = 0, commit: bool = True) -> bytes:
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


def test_control_batches_are_skipped_but_exposed() -> None:
    data = build(FIXED[:2]) + _control_batch(2) + build(FIXED[2:3], base_offset=3)
    assert [r.offset for r in read_record_batches(data)] == [0, 1, 3]
    assert [r.offset for r in read_records(data)] == [0, 1, 3]
    assert [r[0] for r in kafka_read(data)] == [0, 1, 3]
    batches = list(RecordBatchReader(data))
    assert [b.header.is_control for b in batches] == [False, True, False]
    (marker,) = batches[1].records()
    assert marker.key == struct.pack(">hh", 0, 1)
    kbatch = kafka_default.DefaultRecordBatch(_control_batch())
    assert kbatch.is_control_batch and next(iter(kbatch)).commit


# --------------------------------------------------------------------------- corruption


def _flip_targets(data: bytes) -> Iterator[int]:
    """Every byte except baseOffset and partitionLeaderEpoch (outside the CRC, unchecked)."""
    for start, stop in itertools.pairwise(entry_boundaries(data)):
        yield from range(start + 8, start + 12)
        yield from range(start + 16, stop)


@pytest.mark.parametrize("codec", [Compression.NONE, Compression.GZIP])
def test_every_flipped_byte_is_detected(codec: Compression) -> None:
    records: list[Rec] = [(b"k", b"value", TS, (("h", b"x"),)), (None, b"v" * 40, TS, ())]
    data = build(records, codec) + build(records[:1], base_offset=2)
    for pos in _flip_targets(data):
        for mask in (0x01, 0x80, 0xFF):
            buf = bytearray(data)
            buf[pos] ^= mask
            with pytest.raises(CorruptRecordError):
                read_record_batches(bytes(buf), allow_partial_tail=False)
            with pytest.raises(CorruptRecordError):
                assign_batches(buf, 0)
    for pos in [*range(0, 8), *range(12, 16)]:  # outside the CRC: not detected, by design
        buf = bytearray(data)
        buf[pos] ^= 0x01
        assert len(read_record_batches(bytes(buf), allow_partial_tail=False)) == 3


def test_truncation_everywhere() -> None:
    data = build(FIXED[:2]) + build(FIXED, Compression.LZ4, base_offset=2) + build(FIXED[:1])
    bounds = entry_boundaries(data)
    counts = [0, 2, 2 + len(FIXED), 3 + len(FIXED)]
    for cut in range(len(data)):
        complete = max(i for i, b in enumerate(bounds) if b <= cut)
        got = read_record_batches(data[:cut])
        assert len(got) == counts[complete]
        assert len(read_records(data[:cut])) == counts[complete]
        assert len(list(RecordBatchReader(data[:cut]))) == complete
        if cut in bounds:
            assert len(read_record_batches(data[:cut], allow_partial_tail=False)) == len(got)
            assert assign_batches(bytearray(data[:cut]), 0).count == len(got)
        else:
            with pytest.raises(CorruptRecordError):
                read_record_batches(data[:cut], allow_partial_tail=False)
            with pytest.raises(CorruptRecordError):
                read_records(data[:cut], allow_partial_tail=False)
            with pytest.raises(CorruptRecordError):
                list(RecordBatchReader(data[:cut], allow_partial_tail=False))
            with pytest.raises(CorruptRecordError):
                assign_batches(bytearray(data[:cut]), 0)


BAD_PAYLOADS = {
    # name: (records payload, count) -- framing and CRC fine, the records are not
    "too few records": (_record(0, None, b"a"), 2),
    "bytes left over": (_record(0, None, b"a") + b"\x00", 1),
    "record length short": (b"\x04" + _record(0, None, b"a")[1:], 1),
    "record length long": (b"\x7e" + _record(0, None, b"a")[1:], 1),
    "record length one too many": (_varint(8) + _record(0, None, b"a")[1:] + b"\x00", 1),
    "key length -2": (_varint(6) + b"\x00\x00\x00" + _varint(-2) + b"\x01\x00", 1),
    "value length -3": (_varint(6) + b"\x00\x00\x00\x01" + _varint(-3) + b"\x00", 1),
    "header count -1": (_varint(6) + b"\x00\x00\x00\x01\x01" + _varint(-1), 1),
    "header key not utf-8": (_record(0, None, None, 0, (("x", b"v"),)).replace(b"x", b"\xff"), 1),
    "header key length -1": (_varint(8) + b"\x00\x00\x00\x01\x01\x02\x01\x01", 1),
    "header value length -2": (_varint(9) + b"\x00\x00\x00\x01\x01\x02\x02k\x03", 1),
    "header overruns record": (_varint(9) + b"\x00\x00\x00\x01\x01\x02\x02k\x7e", 1),
    "varint too long": (b"\x86\x80\x80\x80\x80\x00" + _record(0, None, b"a")[1:], 1),
    "varlong too long": (_varint(16) + b"\x00" + b"\x80" * 10 + b"\x00\x00\x01\x01\x00", 1),
    "truncated varint": (_varint(6) + b"\x00\x00\x00\x01\x01\x80", 1),
}


@pytest.mark.parametrize("name", sorted(BAD_PAYLOADS))
@pytest.mark.parametrize("codec", [Compression.NONE, Compression.SNAPPY])
def test_bad_records_rejected(name: str, codec: Compression) -> None:
    payload, count = BAD_PAYLOADS[name]
    data = _batch(compress(codec, payload), count, attrs=int(codec))
    with pytest.raises(CorruptRecordError):
        read_record_batches(data)
    with pytest.raises(CorruptRecordError):
        read_records(data)
    with pytest.raises(CorruptRecordError):
        downconvert(data, 1)
    # The broker's default path checks framing and CRC only; the deep check catches it.
    if count == 1:
        assert assign_batches(bytearray(data), 0).count == 1
    with pytest.raises(CorruptRecordError):
        assign_batches(bytearray(data), 0, validate_records=True)


@pytest.mark.parametrize(
    "data",
    [
        _batch(b"", 0)[:8] + struct.pack(">i", 48) + _batch(b"", 0)[12:],  # length < 49
        _batch(b"", 0)[:8] + struct.pack(">i", -1) + _batch(b"", 0)[12:],
        _batch(_record(0, None, b"a"), 1)[:16] + b"\x03" + _batch(_record(0, None, b"a"), 1)[17:],
        _batch(_record(0, None, b"a"), 1, attrs=5),  # codec 5
        _batch(_record(0, None, b"a"), -1),
        _batch(b"not gzip", 1, attrs=1),
    ],
)
def test_bad_batches_rejected(data: bytes) -> None:
    with pytest.raises(CorruptRecordError):
        read_record_batches(data)
    with pytest.raises(CorruptRecordError):
        assign_batches(bytearray(data), 0, validate_records=True)


def test_decompression_is_bounded() -> None:
    records: list[Rec] = [(None, bytes(1 << 20), TS, ())]
    bomb = build(records, Compression.GZIP)
    assert len(bomb) < 5000
    with pytest.raises(CorruptRecordError):
        read_record_batches(bomb, max_decompressed_bytes=1 << 16)
    with pytest.raises(CorruptRecordError):
        read_records(bomb, max_decompressed_bytes=1 << 16)
    with pytest.raises(CorruptRecordError):
        downconvert(bomb, 1, max_decompressed_bytes=1 << 16)
    with pytest.raises(CorruptRecordError):
        assign_batches(bytearray(bomb), 0, validate_records=True, max_decompressed_bytes=1 << 16)
    assert assign_batches(bytearray(bomb), 0, max_decompressed_bytes=1 << 16).count == 1
    assert len(read_record_batches(bomb)) == 1


def test_decompress_false_skips_compressed_batches() -> None:
    data = build(FIXED[:2]) + build(FIXED[2:], Compression.ZSTD, base_offset=2)
    assert [r.offset for r in read_record_batches(data, decompress=False)] == [0, 1]
    bad = build(FIXED[:2]) + _batch(b"junk", 4, attrs=int(Compression.ZSTD))
    assert len(read_record_batches(bad, decompress=False)) == 2


# --------------------------------------------------------------------------- fuzz


def _exercise(data: bytes) -> None:
    """Feed every entry point; only KprotoError subclasses may escape."""
    readers: list[Any] = [
        lambda p: read_record_batches(data, allow_partial_tail=p),
        lambda p: [b.records() for b in RecordBatchReader(data, allow_partial_tail=p)],
        lambda p: read_records(data, allow_partial_tail=p),
    ]
    for partial in (True, False):
        for call in readers:
            try:
                call(partial)
            except KprotoError:
                pass
    try:
        readable: list[View] | None = view(read_records(data, max_decompressed_bytes=1 << 16))
    except KprotoError:
        readable = None
    for to_magic in (0, 1):
        try:
            converted = downconvert(data, to_magic, max_decompressed_bytes=1 << 16)
        except KprotoError:
            assert readable is None
            continue
        # Entries already in the target format are copied unchecked: only a readable input
        # promises a readable output -- then with the same records, as MessageSets.
        if readable is not None:
            back = read_message_set(converted, allow_partial_tail=False)
            assert all(r.magic <= to_magic for r in back)
            assert [(r.offset, r.key, r.value) for r in back] == [(o, k, v) for o, _, k, v, _ in readable]
    try:
        result = assign_batches(bytearray(data), 17, max_message_bytes=4096, max_decompressed_bytes=1 << 16)
    except KprotoError:
        return
    try:  # accepted on framing + CRC; the records may still be bad (see validate_records)
        records = read_records(result.buf, allow_partial_tail=False)
    except KprotoError:
        with pytest.raises(CorruptRecordError):
            assign_batches(bytearray(data), 17, validate_records=True)
        return
    assert [r.offset for r in records] == list(range(17, 17 + result.count))


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=300))
def test_fuzz_random_bytes(data: bytes) -> None:
    _exercise(data)


@st.composite
def mutated_sets(draw: st.DrawFn) -> bytes:
    parts = []
    for i in range(draw(st.integers(min_value=1, max_value=3))):
        records = draw(st.lists(st.tuples(blobs, blobs, timestamps, header_lists), max_size=4))
        kind = draw(st.sampled_from(["v2", "v2", "legacy"]))
        if kind == "legacy" or not records:
            magic = draw(st.sampled_from([0, 1]))
            parts.append(build_message_set([(k, v, t) for k, v, t, _ in records], magic, 0, i))
        else:
            parts.append(build(records, draw(st.sampled_from(ALL_CODECS)), i))
    buf = bytearray(b"".join(parts))
    recrc = draw(st.booleans())  # re-checksum so that mutations reach the record decoder
    mutate(draw, buf)
    if recrc and len(buf) >= 61 and buf[16] == 2:
        length = struct.unpack_from(">i", buf, 8)[0]
        if 49 <= length <= len(buf) - 12:
            end = 12 + length
            struct.pack_into(">I", buf, 17, crc32c.crc32c(bytes(buf[21:end])))
    return bytes(buf)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=mutated_sets())
def test_fuzz_mutated_record_sets(data: bytes) -> None:
    _exercise(data)


# --------------------------------------------------------------------------- assign


def _mixed_set() -> tuple[bytes, list[View]]:
    """Magic 0, 1 and 2 entries, plain and compressed, as a producer could send them."""
    legacy = [(b"a", b"1", TS), (None, b"2", TS + 1)]
    parts = [
        build(FIXED[:3], producer_id=11, producer_epoch=2, base_sequence=0),
        build_message_set(legacy, magic=0),
        build(FIXED[3:], Compression.ZSTD, producer_id=11, producer_epoch=2, base_sequence=3),
        build_message_set(legacy, magic=1, compression=Compression.GZIP),
        build_message_set(legacy, magic=0, compression=Compression.SNAPPY),
        build_message_set(legacy, magic=1),
        build(
            FIXED[:1],
            Compression.LZ4,
            producer_id=12,
            producer_epoch=0,
            base_sequence=0,
            is_transactional=True,
        ),
    ]
    want: list[tuple[bytes | None, bytes | None]] = [
        *[(k, v) for k, v, _, _ in FIXED[:3]],
        *[(k, v) for k, v, _ in legacy],
        *[(k, v) for k, v, _, _ in FIXED[3:]],
        *[(k, v) for k, v, _ in legacy] * 3,
        (FIXED[0][0], FIXED[0][1]),
    ]
    return b"".join(parts), [(0, None, k, v, ()) for k, v in want]


def test_assign_mixed_magic_set() -> None:
    data, want = _mixed_set()
    result = assign_batches(bytearray(data), 1000, partition_leader_epoch=5)
    n = len(want)
    assert isinstance(result, BatchAssignResult)
    assert (result.count, result.last_offset) == (n, 1000 + n - 1)
    assert result.max_timestamp == TS + 100_000
    assert isinstance(result.buf, bytes)  # the magic-0 snappy wrapper was recompressed
    offsets = list(range(1000, 1000 + n))
    theirs = kafka_read(result.buf)
    assert [r[0] for r in theirs] == offsets == [r.offset for r in read_records(result.buf)]
    assert [(r[2], r[3]) for r in theirs] == [(k, v) for _, _, k, v, _ in want]
    assert result.producer_batches == [
        ProducerBatch(11, 2, 0, 2, 1000, False),
        ProducerBatch(11, 2, 3, 2, 1005, False),
        ProducerBatch(12, 0, 0, 0, 1000 + n - 1, True),
    ]
    epochs = [b.header.partition_leader_epoch for b in RecordBatchReader(build(FIXED[:1]))]
    assert epochs == [-1]
    v2 = [kafka_default.DefaultRecordBatch(result.buf[p:]) for p in _v2_starts(result.buf)]
    assert [b.leader_epoch for b in v2] == [5, 5, 5]
    # Without the producer details: the same numbers, as an AssignResult.
    plain = assign_offsets_any(bytearray(data), 1000)
    assert isinstance(plain, AssignResult) and plain[:3] == result[:3]
    assert read_records(plain.buf) == read_records(result.buf)


def _v2_starts(data: bytes) -> list[int]:
    return [p for p in entry_boundaries(data)[:-1] if data[p + 16] == 2]


def test_assign_v2_in_place() -> None:
    buf = bytearray(build(FIXED) + build(FIXED[:2], Compression.GZIP))
    before = bytes(buf)
    result = assign_offsets_any(buf, 2**40)
    assert result.buf is buf
    assert (result.count, result.last_offset) == (len(FIXED) + 2, 2**40 + len(FIXED) + 1)
    # Only the two baseOffsets changed.
    diff = [i for i, (a, b) in enumerate(zip(before, buf, strict=True)) if a != b]
    second = entry_boundaries(before)[1]
    assert all(i < 8 or second <= i < second + 8 for i in diff)
    assert [r[0] for r in kafka_read(buf)] == list(range(2**40, 2**40 + len(FIXED) + 2))


def test_assign_accepts_bytes_and_empty() -> None:
    result = assign_batches(build(FIXED), 3)  # type: ignore[arg-type]
    assert isinstance(result.buf, bytearray) and result.count == len(FIXED)
    assert assign_batches(bytearray(), 7) == (0, 6, -1, bytearray(), [])
    assert assign_offsets_any(bytearray(), 7) == assign_offsets(bytearray(), 7)


def test_assign_legacy_only_matches_assign_offsets() -> None:
    data = build_message_set(FIXED_LEGACY, 1) + build_message_set(FIXED_LEGACY, 0, 1)
    ours = assign_offsets_any(bytearray(data), 50)
    theirs = assign_offsets(bytearray(data), 50)
    assert ours == theirs


FIXED_LEGACY = [(k, v, ts) for k, v, ts, _ in FIXED]

HEADER_ERRORS = {
    "record count 0": _batch(b"", 0, lod=0),
    "lastOffsetDelta too small": _batch(_record(0, None, b"a") + _record(1, None, b"b"), 2, lod=0),
    "lastOffsetDelta too large": _batch(_record(0, None, b"a"), 1, lod=3),
    "control batch": _batch(_record(0, b"\x00\x00\x00\x01", b""), 1, attrs=0x20, pid=1, epoch=0),
    "producer id without sequence": _batch(_record(0, None, b"a"), 1, pid=3, epoch=0),
    "codec 6": _batch(_record(0, None, b"a"), 1, attrs=6),
}


@pytest.mark.parametrize("name", sorted(HEADER_ERRORS))
def test_assign_header_checks(name: str) -> None:
    with pytest.raises(CorruptRecordError):
        assign_batches(bytearray(HEADER_ERRORS[name]), 0)
    with pytest.raises(CorruptRecordError):
        assign_offsets_any(bytearray(_message(0, 0, b"k", b"v") + HEADER_ERRORS[name]), 0)


def test_assign_control_batches_when_allowed() -> None:
    control = _control_batch()
    result = assign_batches(bytearray(control), 9, allow_control_batches=True)
    assert result.count == 1 and result.producer_batches == [ProducerBatch(7, 0, -1, 0, 9, True)]


def test_assign_validate_records_checks_offset_deltas() -> None:
    gap = _batch(_record(0, None, b"a") + _record(2, None, b"b"), 2)  # deltas 0, 2; lod 1
    assert assign_batches(bytearray(gap), 0).count == 2
    with pytest.raises(CorruptRecordError):
        assign_batches(bytearray(gap), 0, validate_records=True)
    good = build(FIXED, Compression.SNAPPY)
    assert assign_batches(bytearray(good), 0, validate_records=True).count == len(FIXED)


def test_assign_max_message_bytes() -> None:
    data = build(FIXED[:2]) + build(FIXED, Compression.GZIP) + _message(0, 1, b"k", b"v" * 10)
    sizes = [b - a for a, b in itertools.pairwise(entry_boundaries(data))]
    largest = max(sizes)
    assert assign_batches(bytearray(data), 0, max_message_bytes=largest).count == len(FIXED) + 3
    with pytest.raises(RecordTooLargeError) as info:
        assign_batches(bytearray(data), 0, max_message_bytes=largest - 1)
    assert (info.value.size, info.value.limit) == (largest, largest - 1)
    assert not isinstance(info.value, CorruptRecordError)


# --------------------------------------------------------------------------- read_records


def test_read_records_mixed_magic() -> None:
    data, _ = _mixed_set()
    assigned = assign_offsets_any(bytearray(data), 0).buf
    ours = read_records(assigned, allow_partial_tail=False)
    theirs = [(o, -1 if t is None else t, k, v, h) for o, t, k, v, h in kafka_read(assigned)]
    assert view(ours) == theirs
    magic0 = [r for r in ours if r.offset in (3, 4)]
    assert [r.timestamp for r in magic0] == [-1, -1]  # magic 0 has no timestamp
    assert all(isinstance(r, DefaultRecord) for r in ours)
    bounds = entry_boundaries(bytes(assigned))
    for cut in range(len(assigned) - 120, len(assigned)):
        complete = max(i for i, b in enumerate(bounds) if b <= cut)
        got = read_records(assigned[:cut])
        assert view(got) == view(read_records(assigned[: bounds[complete]]))


def test_read_records_rejects_unknown_magic() -> None:
    bad = bytearray(_message(0, 1, b"k", b"v"))
    bad[16] = 3
    for data in (bytes(bad), _message(0, 0, b"k", b"v") + bytes(bad)):
        with pytest.raises(CorruptRecordError):
            read_records(data)
        with pytest.raises(CorruptRecordError):
            downconvert(data, 0)
    with pytest.raises(CorruptRecordError):
        list(RecordBatchReader(_message(0, 1, b"k", b"v")))


# --------------------------------------------------------------------------- downconvert


def _log_set() -> tuple[bytes, list[View]]:
    """A log's worth of entries: every magic, codecs, headers, a control batch, a gap."""
    legacy = [(b"a", b"1", TS), (None, b"2", TS + 1)]
    parts = [
        build_message_set(legacy, magic=0, base_offset=0),
        build_message_set(legacy, magic=1, compression=Compression.GZIP, base_offset=2),
        build(FIXED, Compression.ZSTD, base_offset=4),
        _control_batch(4 + len(FIXED)),
        _batch(  # compacted LogAppendTime batch: offsets 11, 14, 18
            _record(0, b"x", b"y") + _record(3, None, b"z", 1) + _record(7, b"w", None, 2),
            3,
            lod=7,
            base_offset=4 + len(FIXED) + 1,
            attrs=0x08,
            max_ts=TS + 50,
        ),
        build_message_set(legacy, magic=1, base_offset=19),
        build(FIXED[:2], base_offset=21),
    ]
    data = b"".join(parts)
    return data, view(read_records(data))


@pytest.mark.parametrize("to_magic", [0, 1])
def test_downconvert_read_by_kafka_python(to_magic: int) -> None:
    data, want = _log_set()
    assert [r[0] for r in want] == [*range(0, 10), 11, 14, 18, 19, 20, 21, 22]
    out = downconvert(data, to_magic)
    theirs = kafka_read(out)
    records = kafka_records.MemoryRecords(out)
    while (batch := records.next_batch()) is not None:
        assert type(batch).__name__ == "LegacyRecordBatch"
        assert all(r.magic <= to_magic for r in read_message_set(out))
    assert [(o, k, v) for o, _, k, v, _ in theirs] == [(o, k, v) for o, _, k, v, _ in want]
    if to_magic == 1:
        v1 = read_message_set(out)
        assert [r.timestamp for r in v1 if r.magic == 1] == [r[1] for r in want if r[0] not in (0, 1)]
        lat = [r for r in v1 if r.offset in (11, 14, 18)]
        assert all(r.attributes & 0x08 and r.timestamp == TS + 50 for r in lat)
    # Entries already in the target format are copied byte for byte.
    first = build_message_set([(b"a", b"1", TS), (None, b"2", TS + 1)], magic=0)
    assert out.startswith(first)


@pytest.mark.parametrize("to_magic", [0, 1])
def test_downconvert_drops_partial_tail(to_magic: int) -> None:
    data, _ = _log_set()
    bounds = entry_boundaries(data)
    for cut in [*range(bounds[-2], len(data)), bounds[2] + 30, bounds[1] - 1]:
        complete = max(b for b in bounds if b <= cut)
        out = downconvert(data[:cut], to_magic)
        assert out == downconvert(data[:complete], to_magic)
        assert [r[0] for r in kafka_read(out)] == [r.offset for r in read_records(data[:complete])]


def test_downconvert_passes_through_and_validates() -> None:
    legacy = build_message_set(FIXED_LEGACY, magic=0) + build_message_set(FIXED_LEGACY, magic=1)
    assert downconvert(legacy, 1) == legacy
    assert downconvert(b"", 0) == b""
    v0 = downconvert(legacy, 0)
    assert [r.magic for r in read_message_set(v0)] == [0] * (2 * len(FIXED))
    assert [(r.key, r.value) for r in read_message_set(v0)] == [(k, v) for k, v, _ in FIXED_LEGACY * 2]
    with pytest.raises(ValueError):
        downconvert(legacy, 2)
    bad = bytearray(build(FIXED))
    bad[-1] ^= 1
    with pytest.raises(CorruptRecordError):
        downconvert(bytes(bad), 1)
    tiny = struct.pack(">qi", 0, 4) + b"\x00" * 8
    with pytest.raises(CorruptRecordError):
        downconvert(tiny, 0)


def test_downconvert_gzip_wrapper_inner_headers_lost() -> None:
    data = build(FIXED[1:2], Compression.GZIP, base_offset=77)
    (rec,) = read_message_set(downconvert(data, 1))
    assert (rec.offset, rec.key, rec.value, rec.timestamp) == (77, None, b"value-1", TS + 1)


def test_gzip_stdlib_payload_reads() -> None:
    """A gzip payload from another implementation (stdlib, with an mtime) decodes."""
    payload = _record(0, b"k", b"v") + _record(1, None, b"w", 3)
    data = _batch(gzip.compress(payload, mtime=12345), 2, attrs=1)
    assert [(r.offset, r.timestamp) for r in read_record_batches(data)] == [(0, TS), (1, TS + 3)]
