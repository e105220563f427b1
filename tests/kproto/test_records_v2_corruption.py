"""RecordBatch (magic 2) against bad input: every flipped byte and truncation detected,
bad records and batches rejected, decompression bounded, and fuzzing after which only
kproto's error type may escape."""

from __future__ import annotations

import itertools
import struct
from collections.abc import Iterator
from typing import Any

import crc32c
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kproto_strategies import entry_boundaries, mutate
from records_v2_support import (
    ALL_CODECS,
    FIXED,
    TS,
    Rec,
    View,
    blobs,
    build,
    header_lists,
    raw_batch,
    raw_record,
    timestamps,
    varint_bytes,
    view,
)

from kproto.errors import CorruptRecordError, KprotoError
from kproto.records import (
    Compression,
    RecordBatchReader,
    assign_batches,
    build_message_set,
    compress,
    downconvert,
    read_message_set,
    read_record_batches,
    read_records,
)

pytestmark = pytest.mark.usefixtures("kafka_python_zstd")


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
    "too few records": (raw_record(0, None, b"a"), 2),
    "bytes left over": (raw_record(0, None, b"a") + b"\x00", 1),
    "record length short": (b"\x04" + raw_record(0, None, b"a")[1:], 1),
    "record length long": (b"\x7e" + raw_record(0, None, b"a")[1:], 1),
    "record length one too many": (varint_bytes(8) + raw_record(0, None, b"a")[1:] + b"\x00", 1),
    "key length -2": (varint_bytes(6) + b"\x00\x00\x00" + varint_bytes(-2) + b"\x01\x00", 1),
    "value length -3": (varint_bytes(6) + b"\x00\x00\x00\x01" + varint_bytes(-3) + b"\x00", 1),
    "header count -1": (varint_bytes(6) + b"\x00\x00\x00\x01\x01" + varint_bytes(-1), 1),
    "header key not utf-8": (raw_record(0, None, None, 0, (("x", b"v"),)).replace(b"x", b"\xff"), 1),
    "header key length -1": (varint_bytes(8) + b"\x00\x00\x00\x01\x01\x02\x01\x01", 1),
    "header value length -2": (varint_bytes(9) + b"\x00\x00\x00\x01\x01\x02\x02k\x03", 1),
    "header overruns record": (varint_bytes(9) + b"\x00\x00\x00\x01\x01\x02\x02k\x7e", 1),
    "varint too long": (b"\x86\x80\x80\x80\x80\x00" + raw_record(0, None, b"a")[1:], 1),
    "varlong too long": (varint_bytes(16) + b"\x00" + b"\x80" * 10 + b"\x00\x00\x01\x01\x00", 1),
    "truncated varint": (varint_bytes(6) + b"\x00\x00\x00\x01\x01\x80", 1),
}


@pytest.mark.parametrize("name", sorted(BAD_PAYLOADS))
@pytest.mark.parametrize("codec", [Compression.NONE, Compression.SNAPPY])
def test_bad_records_rejected(name: str, codec: Compression) -> None:
    payload, count = BAD_PAYLOADS[name]
    data = raw_batch(compress(codec, payload), count, attrs=int(codec))
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
        raw_batch(b"", 0)[:8] + struct.pack(">i", 48) + raw_batch(b"", 0)[12:],  # length < 49
        raw_batch(b"", 0)[:8] + struct.pack(">i", -1) + raw_batch(b"", 0)[12:],
        raw_batch(raw_record(0, None, b"a"), 1)[:16] + b"\x03" + raw_batch(raw_record(0, None, b"a"), 1)[17:],
        raw_batch(raw_record(0, None, b"a"), 1, attrs=5),  # codec 5
        raw_batch(raw_record(0, None, b"a"), -1),
        raw_batch(b"not gzip", 1, attrs=1),
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
    bad = build(FIXED[:2]) + raw_batch(b"junk", 4, attrs=int(Compression.ZSTD))
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
