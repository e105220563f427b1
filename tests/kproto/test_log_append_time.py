"""Stamping record sets with the broker's append time, read back by kafka-python (an
independent implementation): the timestamp type, the timestamps and the checksums."""

from __future__ import annotations

import kafka.record as kafka_records
import pytest

from kproto.records import Compression, RecordBatchBuilder, build_message_set, read_records
from kproto.records.log_append_time import stamp_log_append_time

APPEND = 1_800_000_000_123
LOG_APPEND_TIME = 1  # kafka-python's TimestampType.LOG_APPEND_TIME


@pytest.mark.parametrize("compression", [Compression.NONE, Compression.GZIP])
def test_a_record_batch_is_stamped(compression: Compression) -> None:
    builder = RecordBatchBuilder(compression)
    builder.append(b"k1", b"v1", 1_700_000_000_000)
    builder.append(b"k2", b"v2", 1_700_000_000_500)
    data = bytearray(builder.build() * 2)  # two batches in one set
    stamp_log_append_time(data, APPEND)
    batches = list(kafka_records.MemoryRecords(bytes(data)))
    assert len(batches) == 2
    for batch in batches:
        assert batch.validate_crc() and batch.timestamp_type == LOG_APPEND_TIME
        assert [r.timestamp for r in batch] == [APPEND, APPEND]  # readers take the broker's time
    assert [r.value for r in read_records(bytes(data))] == [b"v1", b"v2", b"v1", b"v2"]


@pytest.mark.parametrize("compression", [Compression.NONE, Compression.GZIP])
def test_magic_1_messages_are_stamped_and_magic_0_left_alone(compression: Compression) -> None:
    data = bytearray(build_message_set([(b"k", b"a", 5), (None, b"b", 6)], magic=1, compression=compression))
    stamp_log_append_time(data, APPEND)
    batches = list(kafka_records.MemoryRecords(bytes(data)))
    assert all(b.validate_crc() for b in batches)  # before iterating: kafka-python decompresses in place
    records = [r for b in batches for r in b]
    assert [r.value for r in records] == [b"a", b"b"]
    assert {r.timestamp for r in records} == {APPEND}
    old = bytearray(build_message_set([(None, b"c")], magic=0))
    before = bytes(old)
    stamp_log_append_time(old, APPEND)
    assert bytes(old) == before
