"""Control batches: the transaction markers' bytes, built and read back.

The layout checked here is the grammar of :mod:`kproto.records.control`:
attributes transactional|control, base sequence -1, one control record whose
key is version 0 + type (0 ABORT, 1 COMMIT) and whose value is version 0 +
the coordinator epoch.
"""

from __future__ import annotations

import struct

import pytest

from kproto import CorruptRecordError
from kproto.records import RecordBatchBuilder, RecordBatchReader, read_record_batches
from kproto.records.control import (
    ABORT,
    COMMIT,
    CONTROL_ATTRIBUTES,
    ControlMarker,
    build_control_batch,
    parse_control_batch,
    parse_control_record,
)


@pytest.mark.parametrize("commit", [True, False])
def test_marker_bytes_follow_the_grammar(commit: bool) -> None:
    data = build_control_batch(77, 3, commit=commit, coordinator_epoch=9, base_offset=41, timestamp=1234)
    (batch,) = list(RecordBatchReader(data, allow_partial_tail=False))
    head = batch.header
    assert head.attributes == CONTROL_ATTRIBUTES == 0x30
    assert head.is_control and head.is_transactional
    assert (head.producer_id, head.producer_epoch, head.base_sequence) == (77, 3, -1)
    assert (head.base_offset, head.record_count, head.max_timestamp) == (41, 1, 1234)
    (record,) = batch.records()
    assert record.key == struct.pack(">hh", 0, COMMIT if commit else ABORT)
    assert record.value == struct.pack(">hi", 0, 9)
    assert parse_control_batch(data) == ControlMarker(77, 3, commit, 9, 41)


def test_consumers_skip_control_batches() -> None:
    plain = RecordBatchBuilder()
    plain.append(None, b"v", 1)
    data = plain.build(0) + build_control_batch(5, 0, commit=True, coordinator_epoch=0, base_offset=1)
    assert [r.value for r in read_record_batches(data)] == [b"v"]


def test_newer_versions_and_unknown_types_are_read_as_kafka_reads_them() -> None:
    # a newer key version keeps the type where it was; a longer value is cut after the epoch
    assert parse_control_record(struct.pack(">hh", 1, COMMIT), struct.pack(">hih", 1, 4, 0)) == (True, 4)
    assert parse_control_record(struct.pack(">hh", 0, 5), None) == (None, -1)  # not a transaction marker


@pytest.mark.parametrize(
    ("key", "value"),
    [(None, b"\0\0\0\0\0\0"), (b"\0\0", b"\0\0\0\0\0\0"), (b"\0\0\0\0", b"\0\0\0")],
)
def test_short_control_records_are_corrupt(key: bytes | None, value: bytes | None) -> None:
    with pytest.raises(CorruptRecordError):
        parse_control_record(key, value)


def test_a_data_batch_is_not_a_marker() -> None:
    b = RecordBatchBuilder(producer_id=1, producer_epoch=0, base_sequence=0, is_transactional=True)
    b.append(None, b"x", 1)
    with pytest.raises(CorruptRecordError):
        parse_control_batch(b.build())
    with pytest.raises(CorruptRecordError):
        parse_control_batch(b"")
