"""Tests of the magic-2 RecordBatch codec, the any-magic broker path and down-conversion.

kafka-python (an independent implementation) provides golden vectors in both directions
and reads what the broker path and the down-converter produce; hypothesis drives round
trips and fuzzing.  Crafted batches are built with the small independent encoder
``raw_batch``/``raw_record`` below (kafka-python's varint writer, the crc32c package), not with
the code under test.

kafka-python compresses zstd with the ``zstandard`` package, which is not a test
requirement; when it is missing, the module fixture gives kafka-python cramjam's zstd
(only the codec: the batch framing read and written stays kafka-python's).
"""

from __future__ import annotations

import itertools
import struct
from typing import Any

import kafka.record.default_records as kafka_default
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from records_v2_support import (
    ALL_CODECS,
    FIXED,
    TS,
    Rec,
    build,
    control_batch,
    expected,
    kafka_build,
    kafka_read,
    raw_batch,
    raw_record,
    record_lists,
    view,
)

from kproto.errors import CorruptRecordError, EncodeError
from kproto.records import (
    Compression,
    RecordBatchBuilder,
    RecordBatchHeader,
    RecordBatchReader,
    decompress,
    read_record_batches,
    read_records,
)

pytestmark = pytest.mark.usefixtures("kafka_python_zstd")


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
        bad = raw_batch(b"garbage" * 5, 3, attrs=int(codec))
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
    payload = raw_record(0, None, b"a", 0) + raw_record(1, None, b"b", 5)
    data = raw_batch(payload, 2, attrs=0x08 | 0x40, base_ts=100, max_ts=999)
    header = next(iter(RecordBatchReader(data))).header
    assert header.timestamp_type == 1 and header.has_delete_horizon
    assert [r.timestamp for r in read_record_batches(data)] == [999, 999]
    assert [r[1] for r in kafka_read(data)] == [999, 999]


# --------------------------------------------------------------------------- control batches


def test_control_batches_are_skipped_but_exposed() -> None:
    data = build(FIXED[:2]) + control_batch(2) + build(FIXED[2:3], base_offset=3)
    assert [r.offset for r in read_record_batches(data)] == [0, 1, 3]
    assert [r.offset for r in read_records(data)] == [0, 1, 3]
    assert [r[0] for r in kafka_read(data)] == [0, 1, 3]
    batches = list(RecordBatchReader(data))
    assert [b.header.is_control for b in batches] == [False, True, False]
    (marker,) = batches[1].records()
    assert marker.key == struct.pack(">hh", 0, 1)
    kbatch = kafka_default.DefaultRecordBatch(control_batch())
    assert kbatch.is_control_batch and next(iter(kbatch)).commit
