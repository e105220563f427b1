"""The broker's any-magic record paths: offsets assigned in place over sets of mixed
magic, mixed sets read back, and down-conversion for Fetch v0-v3 clients, each read
by kafka-python."""

from __future__ import annotations

import gzip
import itertools
import struct

import kafka.record as kafka_records
import kafka.record.default_records as kafka_default
import pytest
from kproto_strategies import entry_boundaries
from records_v2_support import (
    FIXED,
    TS,
    View,
    build,
    control_batch,
    kafka_read,
    raw_batch,
    raw_message,
    raw_record,
    view,
)

from kproto.errors import CorruptRecordError
from kproto.records import (
    AssignResult,
    BatchAssignResult,
    Compression,
    DefaultRecord,
    ProducerBatch,
    RecordBatchReader,
    RecordTooLargeError,
    assign_batches,
    assign_offsets,
    assign_offsets_any,
    build_message_set,
    downconvert,
    read_message_set,
    read_record_batches,
    read_records,
)

pytestmark = pytest.mark.usefixtures("kafka_python_zstd")


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
    "record count 0": raw_batch(b"", 0, lod=0),
    "lastOffsetDelta too small": raw_batch(raw_record(0, None, b"a") + raw_record(1, None, b"b"), 2, lod=0),
    "lastOffsetDelta too large": raw_batch(raw_record(0, None, b"a"), 1, lod=3),
    "control batch": raw_batch(raw_record(0, b"\x00\x00\x00\x01", b""), 1, attrs=0x20, pid=1, epoch=0),
    "producer id without sequence": raw_batch(raw_record(0, None, b"a"), 1, pid=3, epoch=0),
    "codec 6": raw_batch(raw_record(0, None, b"a"), 1, attrs=6),
}


@pytest.mark.parametrize("name", sorted(HEADER_ERRORS))
def test_assign_header_checks(name: str) -> None:
    with pytest.raises(CorruptRecordError):
        assign_batches(bytearray(HEADER_ERRORS[name]), 0)
    with pytest.raises(CorruptRecordError):
        assign_offsets_any(bytearray(raw_message(0, 0, b"k", b"v") + HEADER_ERRORS[name]), 0)


def test_assign_control_batches_when_allowed() -> None:
    control = control_batch()
    result = assign_batches(bytearray(control), 9, allow_control_batches=True)
    assert result.count == 1 and result.producer_batches == [ProducerBatch(7, 0, -1, 0, 9, True)]


def test_assign_validate_records_checks_offset_deltas() -> None:
    gap = raw_batch(raw_record(0, None, b"a") + raw_record(2, None, b"b"), 2)  # deltas 0, 2; lod 1
    assert assign_batches(bytearray(gap), 0).count == 2
    with pytest.raises(CorruptRecordError):
        assign_batches(bytearray(gap), 0, validate_records=True)
    good = build(FIXED, Compression.SNAPPY)
    assert assign_batches(bytearray(good), 0, validate_records=True).count == len(FIXED)


def test_assign_max_message_bytes() -> None:
    data = build(FIXED[:2]) + build(FIXED, Compression.GZIP) + raw_message(0, 1, b"k", b"v" * 10)
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
    bad = bytearray(raw_message(0, 1, b"k", b"v"))
    bad[16] = 3
    for data in (bytes(bad), raw_message(0, 0, b"k", b"v") + bytes(bad)):
        with pytest.raises(CorruptRecordError):
            read_records(data)
        with pytest.raises(CorruptRecordError):
            downconvert(data, 0)
    with pytest.raises(CorruptRecordError):
        list(RecordBatchReader(raw_message(0, 1, b"k", b"v")))


# --------------------------------------------------------------------------- downconvert


def _log_set() -> tuple[bytes, list[View]]:
    """A log's worth of entries: every magic, codecs, headers, a control batch, a gap."""
    legacy = [(b"a", b"1", TS), (None, b"2", TS + 1)]
    parts = [
        build_message_set(legacy, magic=0, base_offset=0),
        build_message_set(legacy, magic=1, compression=Compression.GZIP, base_offset=2),
        build(FIXED, Compression.ZSTD, base_offset=4),
        control_batch(4 + len(FIXED)),
        raw_batch(  # compacted LogAppendTime batch: offsets 11, 14, 18
            raw_record(0, b"x", b"y") + raw_record(3, None, b"z", 1) + raw_record(7, b"w", None, 2),
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
    payload = raw_record(0, b"k", b"v") + raw_record(1, None, b"w", 3)
    data = raw_batch(gzip.compress(payload, mtime=12345), 2, attrs=1)
    assert [(r.offset, r.timestamp) for r in read_record_batches(data)] == [(0, TS), (1, TS + 3)]
