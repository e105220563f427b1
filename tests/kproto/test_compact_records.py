"""Rewriting one log entry for compaction (kproto.records.compact): offsets, producer fields,
codecs and timestamps survive; only the records asked for stay."""

from __future__ import annotations

import pytest

from kproto import CorruptRecordError
from kproto.records import RecordBatchBuilder, build_message_set, read_message_set, read_record_batches
from kproto.records.compact import entry_info, entry_records, filter_entry, first_keyless, split_entries

V2_CODECS = [0, 1, 2, 3, 4]
LEGACY_CODECS = [0, 1, 2, 3]


def _batch(codec: int, *, tombstone_at: int = 3) -> bytes:
    b = RecordBatchBuilder(codec, producer_id=7, producer_epoch=1, base_sequence=10)
    for i in range(5):
        b.append(b"k%d" % (i % 2), None if i == tombstone_at else b"v%d" % i, 1000 + i, headers=[("h", b"x")])
    return b.build(100, partition_leader_epoch=3)


@pytest.mark.parametrize("codec", V2_CODECS)
def test_a_batch_keeps_its_offsets_producer_fields_and_codec(codec: int) -> None:
    entry = _batch(codec)
    assert [r.offset for r in entry_records(entry)] == [100, 101, 102, 103, 104]
    out, count = filter_entry(entry, lambda r: r.offset in (101, 103))
    assert count == 2
    got = [(r.offset, r.key, r.value, r.timestamp, r.headers) for r in read_record_batches(out)]
    assert got == [(101, b"k1", b"v1", 1001, (("h", b"x"),)), (103, b"k1", None, 1003, (("h", b"x"),))]
    info = entry_info(out)
    assert (info.base_offset, info.last_offset) == (100, 104)  # the last offset stays: sequences do
    assert (info.producer_id, info.producer_epoch) == (7, 1)
    assert int.from_bytes(out[21:23], "big") & 0x07 == codec  # recompressed with its own codec
    assert int.from_bytes(out[12:16], "big") == 3  # partition leader epoch


@pytest.mark.parametrize("codec", V2_CODECS)
def test_a_kept_tombstone_gets_a_delete_horizon_and_timestamps_stay(codec: int) -> None:
    out, _ = filter_entry(_batch(codec), lambda r: r.offset >= 102, new_horizon_ms=5_000_000)
    assert entry_info(out).delete_horizon_ms == 5_000_000
    assert [r.timestamp for r in read_record_batches(out)] == [1002, 1003, 1004]
    # a batch with a horizon keeps it; without a tombstone none is set
    again, _ = filter_entry(out, lambda r: r.offset != 102, new_horizon_ms=9_000_000)
    assert entry_info(again).delete_horizon_ms == 5_000_000
    plain, _ = filter_entry(_batch(codec, tombstone_at=-1), lambda r: r.offset > 100, new_horizon_ms=1)
    assert entry_info(plain).delete_horizon_ms == -1


@pytest.mark.parametrize("codec", V2_CODECS)
def test_an_emptied_batch_goes_unless_kept_for_its_producer(codec: int) -> None:
    entry = _batch(codec)
    assert filter_entry(entry, lambda r: False) == (b"", 0)
    empty, count = filter_entry(entry, lambda r: False, keep_empty=True)
    assert count == 0 and read_record_batches(empty) == []
    info = entry_info(empty)
    assert (info.base_offset, info.last_offset, info.producer_id) == (100, 104, 7)


def test_an_entry_left_whole_is_returned_as_it_is() -> None:
    entry = _batch(1)
    assert filter_entry(entry, lambda r: True)[0] is entry


def test_a_control_batch_is_never_rewritten() -> None:
    b = RecordBatchBuilder(producer_id=7, producer_epoch=1, is_transactional=True, is_control=True)
    b.append(b"\x00\x00\x00\x01", b"\x00\x00\x00\x00\x00\x00", 5)
    marker = b.build(9)
    assert filter_entry(marker, lambda r: False)[0] == marker
    assert entry_info(marker).control and entry_info(marker).transactional


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", LEGACY_CODECS)
def test_message_sets_keep_absolute_offsets(magic: int, codec: int) -> None:
    records = [(b"a", b"1", 5), (b"b", b"2", 6), (b"a", None, 7)]
    data = build_message_set(records, magic, codec, base_offset=40)
    for keep, want in (
        (lambda r: r.offset != 41, [(40, b"a", b"1"), (42, b"a", None)]),
        (lambda r: r.offset == 40, [(40, b"a", b"1")]),
        (lambda r: r.offset == 41, [(41, b"b", b"2")]),
    ):
        out = b"".join(filter_entry(e, keep)[0] for e in split_entries(data))
        assert [(r.offset, r.key, r.value) for r in read_message_set(out)] == want


def test_the_first_keyless_record_is_found_in_any_format() -> None:
    assert first_keyless(build_message_set([(b"a", b"1"), (None, b"2")], 1, 1)) == 1
    b = RecordBatchBuilder(3)
    b.append(b"k", b"v", 1)
    b.append(None, b"v", 1)
    assert first_keyless(b.build(0)) == 1
    assert first_keyless(_batch(4)) is None


def test_bytes_that_do_not_parse_raise_corrupt_record() -> None:
    entry = bytearray(_batch(0))
    entry[70:] = b"\xff" * (len(entry) - 70)
    with pytest.raises(CorruptRecordError):
        entry_records(bytes(entry))


@pytest.mark.parametrize("size", [0, 63, 64, 8191, 8192, 70_000])
def test_records_of_every_varint_width_keep_their_bytes(size: int) -> None:
    b = RecordBatchBuilder()
    for i in range(6):  # timestamps out of order: negative deltas too
        b.append(
            b"k%d" % (i % 2) * (size // 100 + 1),
            None if i == 5 else bytes([i]) * size,
            1_000_000 - 7919 * i,
            [("h", b"x" * size)],
        )
    entry = b.build(5)
    out, kept = filter_entry(entry, lambda r: r.offset % 2 == 0, new_horizon_ms=2_000_000_000)
    want = [(r.offset, r.key, r.value, r.timestamp, r.headers) for r in read_record_batches(entry)][1::2]
    assert kept == 3 and entry_info(out).delete_horizon_ms == 2_000_000_000  # offset 10 is a tombstone
    assert [(r.offset, r.key, r.value, r.timestamp, r.headers) for r in read_record_batches(out)] == want
