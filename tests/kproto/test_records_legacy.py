"""Tests of the magic 0/1 MessageSet codec and the compression helpers (kproto.records).

kafka-python (an independent implementation) provides golden vectors in both directions;
hypothesis drives round trips and fuzzing.  Crafted messages are built with the small
independent encoder ``_message`` below, not with the code under test.
"""

from __future__ import annotations

import gzip
import importlib.util
import itertools
import struct
import time
import zlib
from collections.abc import Iterator
from typing import Any

# kafka-python and the codec packages it compresses with (python-snappy, lz4) are test
# requirements (setup.cfg, extras "test").  xxhash is needed by kafka-python only for magic-0
# lz4 (KAFKA-3160 framing); the few cases that need it skip when it is missing.
import kafka.record as kafka_records
import kafka.record.legacy_records as kafka_legacy
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kproto_strategies import entry_boundaries, mutate

from kproto.errors import CorruptRecordError, EncodeError, KprotoError
from kproto.records import (
    AssignResult,
    Compression,
    LegacyRecord,
    MessageSetBuilder,
    MessageSetReader,
    RecordTooLargeError,
    assign_offsets,
    build_message_set,
    compress,
    decompress,
    read_message_set,
    xxh32,
)

HAVE_XXHASH = importlib.util.find_spec("xxhash") is not None

LEGACY_CODECS = [Compression.NONE, Compression.GZIP, Compression.SNAPPY, Compression.LZ4]
ALL_CODECS = [*LEGACY_CODECS, Compression.ZSTD]

# --------------------------------------------------------------------------- helpers


def _message(
    offset: int,
    magic: int,
    attrs: int,
    key: bytes | None,
    value: bytes | None,
    timestamp: int = 0,
) -> bytes:
    """Independent reference encoder of one MessageSet entry (for crafted inputs)."""
    body = struct.pack(">bb", magic, attrs)
    if magic == 1:
        body += struct.pack(">q", timestamp)
    for blob in (key, value):
        body += struct.pack(">i", -1) if blob is None else struct.pack(">i", len(blob)) + blob
    return struct.pack(">qiI", offset, len(body) + 4, zlib.crc32(body)) + body


def _needs_xxhash(magic: int, codec: int) -> None:
    if magic == 0 and codec == Compression.LZ4 and not HAVE_XXHASH:
        pytest.skip("kafka-python needs xxhash for magic-0 lz4")


def kafka_read(data: bytes | bytearray) -> list[tuple[int, int | None, bytes | None, bytes | None]]:
    """(offset, timestamp, key, value) of every record, as kafka-python reads them."""
    if not HAVE_XXHASH and b"\x04\x22\x4d\x18" in data:
        pytest.skip("kafka-python needs xxhash for magic-0 lz4")
    records = kafka_records.MemoryRecords(bytes(data))
    out: list[tuple[int, int | None, bytes | None, bytes | None]] = []
    while True:
        batch = records.next_batch()
        if batch is None:
            return out
        for rec in batch:
            assert rec.validate_crc()
            out.append((rec.offset, rec.timestamp, rec.key, rec.value))


def kafka_build(records: list[tuple[bytes | None, bytes | None, int]], magic: int, codec: int) -> bytes:
    """kafka-python's encoding (offsets 0..n-1 as its producer writes them)."""
    _needs_xxhash(magic, codec)
    builder = kafka_legacy.LegacyRecordBatchBuilder(magic, int(codec), 1 << 30)
    for i, (key, value, ts) in enumerate(records):
        assert builder.append(i, ts, key, value) is not None
    return bytes(builder.build())


def view(records: list[LegacyRecord]) -> list[tuple[int, int | None, bytes | None, bytes | None]]:
    return [(r.offset, r.timestamp, r.key, r.value) for r in records]


blobs = st.none() | st.binary(max_size=64)
timestamps = st.integers(min_value=-(2**63), max_value=2**63 - 1)
record_lists = st.lists(st.tuples(blobs, blobs, timestamps), min_size=1, max_size=12)
FIXED = [
    (b"key-0", b"value-0" * 10, 1_700_000_000_000),
    (None, b"value-1", 1_700_000_000_001),
    (b"", None, 1_700_000_000_005),
    (b"key-3", b"", 1_700_000_000_002),
    (None, None, 1_700_000_000_003),
    (b"k" * 300, bytes(range(256)) * 40, 1_700_000_000_004),
]

# --------------------------------------------------------------------------- round trips


@settings(max_examples=150, deadline=None)
@given(
    magic=st.sampled_from([0, 1]),
    codec=st.sampled_from(LEGACY_CODECS),
    records=record_lists,
    base=st.integers(min_value=0, max_value=2**40),
)
def test_round_trip(magic: int, codec: Compression, records: list[Any], base: int) -> None:
    data = build_message_set(records, magic=magic, compression=codec, base_offset=base)
    got = read_message_set(data, allow_partial_tail=False)
    expected = [
        (base + i, ts if magic == 1 else None, key, value) for i, (key, value, ts) in enumerate(records)
    ]
    assert view(got) == expected
    assert all(r.magic == magic and r.attributes == 0 for r in got)


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", LEGACY_CODECS)
def test_wrapper_layout(magic: int, codec: Compression) -> None:
    data = build_message_set(FIXED, magic=magic, compression=codec, base_offset=1000)
    outer = read_message_set(data, decompress=False)
    n = len(FIXED)
    if codec == Compression.NONE:
        assert [r.offset for r in outer] == list(range(1000, 1000 + n))
        return
    (wrapper,) = outer
    assert wrapper.offset == 1000 + n - 1
    assert wrapper.attributes & 0x07 == codec and wrapper.key is None
    inner = read_message_set(decompress(codec, wrapper.value or b""))
    first = 1000 if magic == 0 else 0  # magic 0 absolute, magic 1 relative inner offsets
    assert [r.offset for r in inner] == list(range(first, first + n))
    if magic == 1:
        assert wrapper.timestamp == max(ts for _, _, ts in FIXED)


def test_builder_api() -> None:
    builder = MessageSetBuilder(magic=1, compression=Compression.GZIP)
    assert len(builder) == 0 and builder.build() == b""
    before = int(time.time() * 1000)
    builder.append(bytearray(b"k"), memoryview(b"v"))
    builder.append(None, b"x", timestamp=5)
    assert len(builder) == 2
    first, second = read_message_set(builder.build(base_offset=7))
    assert first.key == b"k" and first.value == b"v" and type(first.key) is bytes
    assert before <= (first.timestamp or 0) <= int(time.time() * 1000)
    assert second.offset == 8 and second.timestamp == 5


@pytest.mark.parametrize(
    ("call", "args"),
    [
        (lambda b, *a: b.append(*a), ("key", b"v")),
        (lambda b, *a: b.append(*a), (None, 5)),
        (lambda b, *a: b.append(*a), (None, b"v", 1.5)),
        (lambda b, *a: b.append(*a), (None, b"v", 2**63)),
        (lambda b, *a: b.build(*a), (-1,)),
    ],
)
def test_builder_rejects_bad_arguments(call: Any, args: tuple[Any, ...]) -> None:
    with pytest.raises(EncodeError):
        call(MessageSetBuilder(magic=1), *args)


@pytest.mark.parametrize(("magic", "codec"), [(2, 0), (-1, 0), (0, 4), (1, 7), (0, "gzip")])
def test_builder_rejects_bad_format(magic: int, codec: Any) -> None:
    with pytest.raises(EncodeError):
        MessageSetBuilder(magic, codec)


def test_build_message_set_rejects_bad_tuples() -> None:
    with pytest.raises(EncodeError):
        build_message_set([(b"k",)])
    with pytest.raises(EncodeError):
        build_message_set([[b"k", b"v"]])  # type: ignore[list-item]


# --------------------------------------------------------------------------- kafka-python


@pytest.mark.parametrize("magic", [0, 1])
def test_uncompressed_bytes_identical_to_kafka_python(magic: int) -> None:
    assert build_message_set(FIXED, magic=magic) == kafka_build(FIXED, magic, 0)


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", LEGACY_CODECS)
def test_kproto_reads_kafka_python(magic: int, codec: Compression) -> None:
    data = kafka_build(FIXED, magic, codec)
    theirs = kafka_read(data)
    mine = read_message_set(data, allow_partial_tail=False)
    assert view(mine) == theirs
    assert [(k, v) for _, _, k, v in theirs] == [(k, v) for k, v, _ in FIXED]
    if codec != Compression.NONE:
        # Same inner MessageSet bytes; for snappy (deterministic, same block size) the very
        # same compressed payload.  gzip/lz4 differ in level/mtime/frame flags only.
        ours = read_message_set(build_message_set(FIXED, magic, codec), decompress=False)[0]
        kp = read_message_set(data, decompress=False)[0]
        assert decompress(codec, ours.value or b"") == decompress(codec, kp.value or b"")
        if codec == Compression.SNAPPY:
            assert ours.value == kp.value


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", LEGACY_CODECS)
def test_kafka_python_reads_kproto(magic: int, codec: Compression) -> None:
    data = build_message_set(FIXED, magic=magic, compression=codec, base_offset=42)
    expected = [(42 + i, ts if magic else None, k, v) for i, (k, v, ts) in enumerate(FIXED)]
    assert kafka_read(data) == expected


@settings(max_examples=40, deadline=None)
@given(
    magic=st.sampled_from([0, 1]),
    codec=st.sampled_from(LEGACY_CODECS),
    records=st.lists(
        st.tuples(blobs, blobs, st.integers(min_value=0, max_value=2**62)),
        min_size=1,
        max_size=8,
    ),
)
def test_interop_property(magic: int, codec: Compression, records: list[Any]) -> None:
    ours = build_message_set(records, magic, codec)
    assert kafka_read(ours) == view(read_message_set(ours))
    theirs = kafka_build(records, magic, codec)
    assert kafka_read(theirs) == view(read_message_set(theirs))


# KAFKA-3160: kafka-python's magic-0 lz4 MessageSet whose lz4 frame header checksum was
# computed over the magic number too (0x1a instead of the correct 0x82).
KAFKA_3160_VECTOR = bytes.fromhex(
    "0000000000000000000000712e24cfcf0003ffffffff0000006304224d1860401a5400000016"
    "0001005130a237f3620f00f118056b65792d300000001d6f6c64206c7a3420636865636b7375"
    "6d20284b41464b412d33313630292c00f00c00000100000014a6f2489d0000ffffffff000000"
    "067365636f6e6400000000"
)


def _hc(frame: bytes) -> tuple[int, int, int]:
    """(stored HC, correct HC, KAFKA-3160 HC) of an lz4 frame without content size."""
    return frame[6], (xxh32(frame[4:6]) >> 8) & 0xFF, (xxh32(frame[:6]) >> 8) & 0xFF


def test_kafka_3160_vector() -> None:
    frame = read_message_set(KAFKA_3160_VECTOR, decompress=False)[0].value or b""
    stored, correct, old = _hc(frame)
    assert stored == old != correct  # the vector really has the broken checksum
    got = read_message_set(KAFKA_3160_VECTOR, allow_partial_tail=False)
    assert view(got) == [
        (0, None, b"key-0", b"old lz4 checksum (KAFKA-3160)"),
        (1, None, None, b"second"),
    ]


@pytest.mark.parametrize(("magic", "want_old"), [(0, True), (1, False)])
def test_lz4_builder_header_checksum(magic: int, want_old: bool) -> None:
    data = build_message_set(FIXED, magic=magic, compression=Compression.LZ4)
    stored, correct, old = _hc(read_message_set(data, decompress=False)[0].value or b"")
    assert stored == (old if want_old else correct)
    broken = bytearray(data)
    frame_start = len(data) - len(read_message_set(data, decompress=False)[0].value or b"")
    broken[frame_start + 6] = next(b for b in range(256) if b not in (old, correct))
    with pytest.raises(CorruptRecordError):
        decompress(Compression.LZ4, bytes(broken[frame_start:]))


# --------------------------------------------------------------------------- reader


def test_partial_tail_every_cut() -> None:
    data = build_message_set(FIXED, magic=1)
    bounds = entry_boundaries(data)
    for cut in range(len(data) + 1):
        complete = sum(1 for b in bounds[1:] if b <= cut)
        got = read_message_set(data[:cut])
        assert [r.key for r in got] == [k for k, _, _ in FIXED[:complete]]
        if cut in bounds:
            assert len(read_message_set(data[:cut], allow_partial_tail=False)) == complete
        else:
            with pytest.raises(CorruptRecordError):
                read_message_set(data[:cut], allow_partial_tail=False)


def test_reader_accepts_memoryview_and_bytearray_and_is_reiterable() -> None:
    data = build_message_set(FIXED, magic=0, compression=Compression.SNAPPY)
    for arg in (memoryview(data), bytearray(data)):
        reader = MessageSetReader(arg)
        assert view(list(reader)) == view(list(reader)) == view(read_message_set(data))


def test_log_append_time_wrapper_overrides_inner_timestamps() -> None:
    inner = b"".join(_message(i, 1, 0, None, b"v%d" % i, timestamp=10 + i) for i in range(3))
    wrapper = _message(99, 1, 0x08 | 1, None, gzip.compress(inner), timestamp=777)
    got = read_message_set(wrapper)
    assert [(r.offset, r.timestamp) for r in got] == [(97, 777), (98, 777), (99, 777)]
    assert all(r.attributes & 0x08 for r in got)


def test_raw_snappy_wrapper_without_xerial_header() -> None:
    import cramjam

    inner = b"".join(_message(i, 0, 0, None, b"x" * 50) for i in range(4))
    raw = bytes(cramjam.snappy.compress_raw(inner))
    got = read_message_set(_message(3, 0, 2, None, raw))
    assert [r.offset for r in got] == [0, 1, 2, 3]


def test_mixed_magic_set() -> None:
    data = _message(0, 0, 0, b"a", b"b") + _message(1, 1, 0, None, b"c", 5)
    assert view(read_message_set(data)) == [(0, None, b"a", b"b"), (1, 5, None, b"c")]


BAD_WRAPPERS = {
    "nested": _message(
        0,
        0,
        1,
        None,
        gzip.compress(_message(0, 0, 1, None, gzip.compress(_message(0, 0, 0, None, b"x")))),
    ),
    "magic mismatch": _message(0, 1, 1, None, gzip.compress(_message(0, 0, 0, None, b"x"))),
    "empty inner": _message(0, 0, 1, None, gzip.compress(b"")),
    "null value": _message(0, 0, 1, None, None),
    "truncated inner": _message(0, 0, 1, None, gzip.compress(_message(0, 0, 0, None, b"x")[:-1])),
    "bad inner crc": _message(0, 0, 1, None, gzip.compress(_message(0, 0, 0, None, b"x")[:-1] + b"y")),
    "zstd in magic 1": _message(0, 1, 4, None, compress(Compression.ZSTD, b"")),
    "codec 7": _message(0, 0, 7, None, b"junk"),
    "not gzip": _message(0, 0, 1, None, b"definitely not gzip"),
}


@pytest.mark.parametrize("name", sorted(BAD_WRAPPERS))
def test_bad_wrappers_rejected(name: str) -> None:
    data = BAD_WRAPPERS[name]
    with pytest.raises(CorruptRecordError):
        read_message_set(data)
    with pytest.raises(CorruptRecordError):
        assign_offsets(bytearray(data), 0)
    # Shallow reading does not look inside.
    assert len(read_message_set(data, decompress=False)) == 1


@pytest.mark.parametrize(
    "data",
    [
        _message(0, 2, 0, None, b"x"),  # magic 2 is a RecordBatch, not a MessageSet
        struct.pack(">qi", 0, 3) + b"abc",  # MessageSize below the minimum
        struct.pack(">qi", 0, -5) + b"\x00" * 20,
        struct.pack(">qiIbb", 0, 20, 0, 1, 0) + b"\xff" * 14,  # too short for magic 1
    ],
)
def test_bad_framing_rejected(data: bytes) -> None:
    with pytest.raises(CorruptRecordError):
        read_message_set(data)
    with pytest.raises(CorruptRecordError):
        assign_offsets(bytearray(data), 0)


@pytest.mark.parametrize("field", ["key", "value"])
def test_length_fields_must_fill_the_message(field: str) -> None:
    good = _message(0, 0, 0, b"key", b"value")
    key_len_pos = 18
    value_len_pos = key_len_pos + 4 + 3
    pos = key_len_pos if field == "key" else value_len_pos
    for wrong in (-2, 2, 4, 1000):
        body = bytearray(good[16:])
        struct.pack_into(">i", body, pos - 16, wrong)
        msg = good[:12] + struct.pack(">I", zlib.crc32(body)) + bytes(body)
        with pytest.raises(CorruptRecordError):
            read_message_set(msg)
        with pytest.raises(CorruptRecordError):
            assign_offsets(bytearray(msg), 0)


# --------------------------------------------------------------------------- assign_offsets


@pytest.mark.parametrize("magic", [0, 1])
def test_assign_plain_in_place(magic: int) -> None:
    buf = bytearray(build_message_set(FIXED, magic=magic))
    result = assign_offsets(buf, 500)
    assert isinstance(result, AssignResult)
    assert result.buf is buf
    assert (result.count, result.last_offset) == (len(FIXED), 500 + len(FIXED) - 1)
    assert result.max_timestamp == (max(ts for _, _, ts in FIXED) if magic else -1)
    expected = [(500 + i, ts if magic else None, k, v) for i, (k, v, ts) in enumerate(FIXED)]
    assert kafka_read(buf) == expected
    assert view(read_message_set(buf)) == expected


@pytest.mark.parametrize("codec", LEGACY_CODECS[1:])
def test_assign_magic1_wrapper_in_place(codec: Compression) -> None:
    buf = bytearray(kafka_build(FIXED, 1, codec))  # kafka-python: wrapper offset 0
    inner_before = read_message_set(buf, decompress=False)[0].value
    result = assign_offsets(buf, 10)
    assert result.buf is buf
    assert (result.count, result.last_offset) == (len(FIXED), 10 + len(FIXED) - 1)
    assert read_message_set(buf, decompress=False)[0].value == inner_before  # not recompressed
    assert [o for o, _, _, _ in kafka_read(buf)] == list(range(10, 10 + len(FIXED)))
    assert [r.offset for r in read_message_set(buf)] == list(range(10, 10 + len(FIXED)))


@pytest.mark.parametrize("codec", LEGACY_CODECS[1:])
def test_assign_magic1_wrapper_renumbers_bad_relative_offsets(codec: Compression) -> None:
    inner = b"".join(_message(o, 1, 0, None, b"v%d" % o, timestamp=o) for o in (5, 9, 12))
    buf = bytearray(_message(0, 1, int(codec), None, compress(codec, inner), timestamp=12))
    result = assign_offsets(buf, 100)
    assert (result.count, result.last_offset, result.max_timestamp) == (3, 102, 12)
    assert [(o, v) for o, _, _, v in kafka_read(result.buf)] == [
        (100, b"v5"),
        (101, b"v9"),
        (102, b"v12"),
    ]


@pytest.mark.parametrize("codec", LEGACY_CODECS[1:])
def test_assign_magic0_wrapper_recompressed(codec: Compression) -> None:
    plain = _message(0, 0, 0, b"p", b"plain")
    wrapped = kafka_build(FIXED, 0, codec)
    buf = bytearray(plain + wrapped + plain)
    result = assign_offsets(buf, 1_000_000)
    n = len(FIXED) + 2
    assert (result.count, result.last_offset) == (n, 1_000_000 + n - 1)
    assert isinstance(result.buf, bytes)
    offsets = list(range(1_000_000, 1_000_000 + n))
    assert [o for o, _, _, _ in kafka_read(result.buf)] == offsets
    assert [r.offset for r in read_message_set(result.buf)] == offsets
    wrapper = read_message_set(result.buf, decompress=False)[1]
    assert wrapper.offset == offsets[-2] and wrapper.attributes & 7 == codec
    inner = read_message_set(decompress(codec, wrapper.value or b""), decompress=False)
    assert [r.offset for r in inner] == offsets[1:-1]  # absolute inside the wrapper


def test_assign_accepts_bytes_and_empty() -> None:
    data = build_message_set(FIXED)
    result = assign_offsets(data, 3)  # type: ignore[arg-type]
    assert isinstance(result.buf, bytearray) and result.count == len(FIXED)
    assert assign_offsets(bytearray(), 7) == (0, 6, -1, bytearray())


def _flip_targets(data: bytes) -> Iterator[int]:
    """Every byte of every entry except the 8 Offset bytes (rewritten anyway)."""
    bounds = entry_boundaries(data)
    for start, stop in itertools.pairwise(bounds):
        yield from range(start + 8, stop)


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", [Compression.NONE, Compression.GZIP])
def test_assign_rejects_every_flipped_byte(magic: int, codec: Compression) -> None:
    parts = [build_message_set(FIXED[:3], magic, codec), build_message_set(FIXED[3:5], magic)]
    data = b"".join(parts)
    for pos in _flip_targets(data):
        for mask in (0x01, 0x80, 0xFF):
            buf = bytearray(data)
            buf[pos] ^= mask
            with pytest.raises(CorruptRecordError):
                assign_offsets(buf, 0)
            with pytest.raises(CorruptRecordError):
                read_message_set(bytes(buf), allow_partial_tail=False)


@pytest.mark.parametrize("magic", [0, 1])
def test_assign_rejects_truncation_everywhere(magic: int) -> None:
    data = build_message_set(FIXED[:2], magic) + build_message_set(FIXED, magic, 2)
    bounds = entry_boundaries(data)
    for cut in range(len(data)):
        if cut in bounds:
            assert assign_offsets(bytearray(data[:cut]), 0).count == [0, 1, 2][bounds.index(cut)]
        else:
            with pytest.raises(CorruptRecordError):
                assign_offsets(bytearray(data[:cut]), 0)


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", [Compression.NONE, Compression.LZ4])
def test_assign_max_message_bytes(magic: int, codec: Compression) -> None:
    data = build_message_set(FIXED, magic, codec)
    largest = max(b - a for a, b in itertools.pairwise(entry_boundaries(data)))
    assert assign_offsets(bytearray(data), 0, max_message_bytes=largest).count == len(FIXED)
    with pytest.raises(RecordTooLargeError) as info:
        assign_offsets(bytearray(data), 0, max_message_bytes=largest - 1)
    assert (info.value.size, info.value.limit) == (largest, largest - 1)
    assert not isinstance(info.value, CorruptRecordError)


def test_assign_wrapper_decompression_is_bounded() -> None:
    bomb = _message(0, 1, 1, None, gzip.compress(_message(0, 1, 0, None, bytes(1 << 20))))
    with pytest.raises(CorruptRecordError):
        assign_offsets(bytearray(bomb), 0, max_decompressed_bytes=1 << 16)
    assert assign_offsets(bytearray(bomb), 0).count == 1
    with pytest.raises(CorruptRecordError):
        read_message_set(bomb, max_decompressed_bytes=1 << 16)


# --------------------------------------------------------------------------- compression


def test_xxh32_known_vectors() -> None:
    # Reference values of the xxHash specification's implementation (seed 0).
    assert xxh32(b"") == 0x02CC5D05
    assert xxh32(b"a") == 0x550D7456
    assert xxh32(b"abc") == 0x32D153FF
    assert xxh32(b"Nobody inspects the spammish repetition") == 0xE2293B2F


@pytest.mark.skipif(not HAVE_XXHASH, reason="xxhash not installed")
@given(data=st.binary(max_size=100), seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_xxh32_matches_xxhash(data: bytes, seed: int) -> None:
    import xxhash

    assert xxh32(data, seed) == xxhash.xxh32(data, seed=seed).intdigest()


@settings(max_examples=60, deadline=None)
@given(codec=st.sampled_from(ALL_CODECS), data=st.binary(max_size=3000), legacy=st.booleans())
def test_compress_round_trip(codec: Compression, data: bytes, legacy: bool) -> None:
    assert decompress(codec, compress(codec, data, legacy_lz4=legacy)) == data


@pytest.mark.skipif(not HAVE_XXHASH, reason="kafka-python's old-lz4 codec needs xxhash")
def test_compress_matches_kafka_python_codecs() -> None:
    from kafka import codec as kc

    data = bytes(range(256)) * 500  # > 32 KiB: several xerial blocks
    assert compress(Compression.SNAPPY, data) == kc.snappy_encode(data)
    assert kc.snappy_decode(compress(Compression.SNAPPY, data)) == data
    assert kc.gzip_decode(compress(Compression.GZIP, data)) == data
    assert kc.lz4_decode(compress(Compression.LZ4, data)) == data
    assert kc.lz4_decode_old_kafka(compress(Compression.LZ4, data, legacy_lz4=True)) == data
    for encoded, codec in [
        (kc.gzip_encode(data), Compression.GZIP),
        (kc.snappy_encode(data), Compression.SNAPPY),
        (kc.snappy_encode(data, xerial_compatible=False), Compression.SNAPPY),
        (kc.lz4_encode(data), Compression.LZ4),
        (kc.lz4_encode_old_kafka(data), Compression.LZ4),
    ]:
        assert decompress(codec, encoded) == data


@pytest.mark.parametrize("codec", ALL_CODECS[1:])
def test_decompression_limit(codec: Compression) -> None:
    blob = compress(codec, bytes(300_000))
    assert decompress(codec, blob, max_size=300_000) == bytes(300_000)
    with pytest.raises(CorruptRecordError):
        decompress(codec, blob, max_size=299_999)


def test_lz4_block_by_block_path() -> None:
    # 100 kB in 64 KiB blocks: worst case 128 KiB > limit, real size fits -> block path.
    data = bytes(range(256)) * 400
    frame = compress(Compression.LZ4, data)
    assert decompress(Compression.LZ4, frame, max_size=len(data)) == data
    with pytest.raises(CorruptRecordError):
        decompress(Compression.LZ4, frame, max_size=len(data) - 1)


def test_gzip_members_and_trailing_bytes() -> None:
    two = gzip.compress(b"abc") + gzip.compress(b"def")
    assert decompress(Compression.GZIP, two) == b"abcdef"
    assert decompress(Compression.GZIP, gzip.compress(b"abc") + b"\x00\x00") == b"abc"
    with pytest.raises(CorruptRecordError):
        decompress(Compression.GZIP, gzip.compress(b"abc") + b"junk")
    with pytest.raises(CorruptRecordError):
        decompress(Compression.GZIP, gzip.compress(b"abc")[:-3])


def test_unknown_codecs() -> None:
    with pytest.raises(EncodeError):
        compress(9, b"x")
    with pytest.raises(CorruptRecordError):
        decompress(9, b"x")


@settings(max_examples=300, deadline=5000, suppress_health_check=[HealthCheck.too_slow])
@given(codec=st.sampled_from(ALL_CODECS[1:]), data=st.binary(max_size=200))
def test_decompress_garbage(codec: Compression, data: bytes) -> None:
    try:
        decompress(codec, data, max_size=1 << 20)
    except CorruptRecordError:
        pass


@st.composite
def corrupted_prefixed(draw: st.DrawFn, codec: Compression) -> bytes:
    """A valid compressed stream with a few bytes flipped (past generic magic checks)."""
    blob = bytearray(compress(codec, draw(st.binary(min_size=1, max_size=500))))
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        blob[draw(st.integers(min_value=0, max_value=len(blob) - 1))] ^= draw(
            st.integers(min_value=1, max_value=255)
        )
    return bytes(blob)


@settings(max_examples=300, deadline=5000)
@given(data=st.data(), codec=st.sampled_from(ALL_CODECS[1:]))
def test_decompress_mutated_streams(data: st.DataObject, codec: Compression) -> None:
    blob = data.draw(corrupted_prefixed(codec))
    try:
        decompress(codec, blob, max_size=1 << 20)
    except CorruptRecordError:
        pass


# --------------------------------------------------------------------------- fuzz


def _exercise(data: bytes) -> None:
    """Feed every entry point; only KprotoError subclasses may escape."""
    for partial in (True, False):
        try:
            for _ in MessageSetReader(data, allow_partial_tail=partial):
                pass
        except KprotoError:
            pass
        try:
            read_message_set(data, allow_partial_tail=partial, decompress=False)
        except KprotoError:
            pass
    try:
        result = assign_offsets(bytearray(data), 17, max_message_bytes=4096)
    except KprotoError:
        return
    # Whatever assign_offsets accepts must read back completely with the new offsets.
    records = read_message_set(result.buf, allow_partial_tail=False)
    assert [r.offset for r in records] == list(range(17, 17 + result.count))


@settings(max_examples=400, deadline=5000)
@given(data=st.binary(max_size=300))
def test_fuzz_random_bytes(data: bytes) -> None:
    _exercise(data)


@st.composite
def mutated_sets(draw: st.DrawFn) -> bytes:
    records = draw(st.lists(st.tuples(blobs, blobs, timestamps), min_size=1, max_size=5))
    magic = draw(st.sampled_from([0, 1]))
    codec = draw(st.sampled_from(LEGACY_CODECS))
    buf = bytearray(build_message_set(records, magic, codec))
    mutate(draw, buf)
    return bytes(buf)


@settings(max_examples=600, deadline=5000, suppress_health_check=[HealthCheck.too_slow])
@given(data=mutated_sets())
def test_fuzz_mutated_message_sets(data: bytes) -> None:
    _exercise(data)


def test_magic1_wrapper_offset_rules() -> None:
    inner = b"".join(_message(i, 1, 0, None, b"v", timestamp=i) for i in range(3))
    payload = gzip.compress(inner)
    # Offset 0: not assigned yet (producer data) -> relative offsets as they are (Kafka rule).
    assert [r.offset for r in read_message_set(_message(0, 1, 1, None, payload, 2))] == [0, 1, 2]
    # Below the last inner relative offset and not 0: invalid.
    with pytest.raises(CorruptRecordError):
        read_message_set(_message(1, 1, 1, None, payload, 2))
    got = read_message_set(_message(12, 1, 1, None, payload, 2))
    assert [r.offset for r in got] == [10, 11, 12]


def test_shape_changes_in_hot_loops() -> None:
    """Runs of equal and varying key/value sizes, nulls and magics (the guessed-shape paths)."""
    same = [(b"k" * 10, b"v" * 100, 1)] * 5
    varying = [(b"k" * 10, b"v" * n, 2) for n in (0, 100, 99, 101, 3, 3, 3)]
    nulls = [(None, None, 3), (None, b"x", 3), (b"", None, 3), (b"", b"", 3), (None, None, 3)]
    keys = [(b"k" * n, b"v" * 100, 4) for n in (1, 1, 2, 2, 0, 0, 1)]
    records = same + varying + nulls + keys + same
    parts = [
        build_message_set(records[i : i + 7], magic=i // 7 % 2, base_offset=i)
        for i in range(0, len(records), 7)
    ]
    data = b"".join(parts)
    expected = [(i, ts if i // 7 % 2 else None, k, v) for i, (k, v, ts) in enumerate(records)]
    assert view(read_message_set(data)) == expected == kafka_read(data)
    result = assign_offsets(bytearray(data), 50)
    assert result.count == len(records) and result.max_timestamp == 4
    assert [o for o, _, _, _ in kafka_read(result.buf)] == list(range(50, 50 + len(records)))
    for cut in range(len(data) - 150, len(data)):  # partial tails after a guessed shape
        got = read_message_set(data[:cut])
        assert view(got) == expected[: len(got)] and len(got) >= len(records) - 2
