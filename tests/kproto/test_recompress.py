"""kproto.records.recompress: batches re-encoded in another codec, records and header kept.

Every codec pair round-trips: the records (offsets, timestamps, keys, values,
headers) read back equal, the header fields other than codec, length and CRC
are byte-for-byte those of the original, the CRC checks; batches already in
the codec, MessageSets and control batches pass through unchanged; bad
compressed bytes are CorruptRecordError.
"""

from __future__ import annotations

import itertools
import struct

import pytest
from kafka.record.default_records import DefaultRecordBatch

from kproto import CorruptRecordError
from kproto.records import Compression, RecordBatchBuilder, build_message_set, read_record_batches
from kproto.records.recompress import batches_to_recompress, recompress_batches

CODECS = list(Compression)


def _batch(codec: Compression, base_offset: int = 100, *, transactional: bool = False) -> bytes:
    b = RecordBatchBuilder(
        codec, producer_id=7, producer_epoch=3, base_sequence=11, is_transactional=transactional
    )
    for i in range(20):
        b.append(b"k%d" % i, b"value-%d " % i * 20, 1_700_000_000_000 + (i * 37) % 50, [("h", b"%d" % i)])
    return b.build(base_offset, partition_leader_epoch=5)


def _unchanged_header_fields(batch: bytes) -> tuple[bytes, int, bytes]:
    """Base offset .. magic (minus length), attributes without codec, LastOffsetDelta .. RecordCount."""
    attrs = struct.unpack_from(">h", batch, 21)[0]
    return batch[0:8] + batch[12:17], attrs & ~0x07, batch[23:61]


@pytest.mark.parametrize(("source", "target"), list(itertools.product(CODECS, CODECS)))
def test_every_codec_pair_keeps_records_and_header(source: Compression, target: Compression) -> None:
    original = _batch(source)
    out = recompress_batches(original, target)
    if source == target:
        assert out == original
        return
    assert batches_to_recompress(original, target) == 1 and batches_to_recompress(out, target) == 0
    assert struct.unpack_from(">h", out, 21)[0] & 0x07 == target
    assert _unchanged_header_fields(out) == _unchanged_header_fields(original)
    assert read_record_batches(out) == read_record_batches(original)  # CRC checked while reading
    other = DefaultRecordBatch(out)  # a second reader agrees
    other.validate_crc()
    assert [r.value for r in other] == [r.value for r in DefaultRecordBatch(original)]


def test_a_mixed_record_set_recompresses_only_what_differs() -> None:
    legacy = build_message_set([(None, b"old", 1_700_000_000_000)], magic=1)
    keep = _batch(Compression.ZSTD, 0)
    change = _batch(Compression.GZIP, 20, transactional=True)
    mixed = legacy + keep + change
    out = recompress_batches(mixed, Compression.ZSTD)
    assert out.startswith(legacy + keep)
    assert batches_to_recompress(out, Compression.ZSTD) == 0
    assert read_record_batches(out[len(legacy) :]) == read_record_batches(keep + change)


def test_control_batches_are_left_alone() -> None:
    marker = RecordBatchBuilder(producer_id=7, producer_epoch=0, is_transactional=True, is_control=True)
    marker.append(b"\x00\x00\x00\x00", b"\x00\x00\x00\x00\x00\x00", 1)
    built = marker.build(3)
    assert batches_to_recompress(built, Compression.GZIP) == 0
    assert recompress_batches(built, Compression.GZIP) == built


def test_bad_compressed_bytes_are_corrupt() -> None:
    good = bytearray(_batch(Compression.GZIP))
    good[70:80] = b"\xff" * 10
    with pytest.raises(CorruptRecordError):
        recompress_batches(good, Compression.NONE)
    with pytest.raises(CorruptRecordError):
        recompress_batches(good[:-5], Compression.NONE)  # cut short
