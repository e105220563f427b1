"""Control batches: the transaction markers a broker writes into a partition.

A transaction ends, on every partition it wrote to, with one *control batch*:
a RecordBatch v2 (:mod:`kproto.records.default`) whose attributes have both
``isTransactional`` and ``isControlBatch`` set, carrying the producer id and
epoch of the transaction, base sequence -1, and one *control record*.  A
control record is an ordinary record whose key and value have this grammar
(Kafka's ``ControlRecordType`` and ``EndTransactionMarker``)::

    ControlRecordKey =>
      version => int16                     (0)
      type => int16                        (0 ABORT, 1 COMMIT)

    EndTransactionMarker (the value) =>
      version => int16                     (0)
      coordinator_epoch => int32           (the epoch of the coordinator that wrote it)

Readers ignore a key version above 0 as Kafka's do: the type is still the
second int16; a value may carry more bytes after the coordinator epoch (a
newer version), which are skipped.  A key type other than ABORT or COMMIT
is an unknown control record (Kafka has others, e.g. for its own metadata
log): :func:`parse_control_batch` returns it with ``commit`` None.

Pure codec: bytes in, bytes or tuples out; which partition gets a marker and
what it ends is the broker's business.
"""

from __future__ import annotations

import struct
import time
from typing import NamedTuple

from kproto.errors import CorruptRecordError
from kproto.records.default import (
    CONTROL_MASK,
    NO_SEQUENCE,
    TRANSACTIONAL_MASK,
    RecordBatchReader,
)
from kproto.records.default_builder import RecordBatchBuilder

__all__ = [
    "ABORT",
    "COMMIT",
    "ControlMarker",
    "build_control_batch",
    "control_key",
    "end_txn_marker_value",
    "parse_control_batch",
    "parse_control_record",
]

ABORT = 0
COMMIT = 1
CONTROL_RECORD_VERSION = 0
END_TXN_MARKER_VERSION = 0
#: the attributes of a marker batch: transactional and control, no compression, CreateTime
CONTROL_ATTRIBUTES = TRANSACTIONAL_MASK | CONTROL_MASK

_KEY = struct.Struct(">hh")  # version, type
_VALUE = struct.Struct(">hi")  # version, coordinator_epoch


class ControlMarker(NamedTuple):
    """One transaction marker as read back from a control batch."""

    producer_id: int
    producer_epoch: int
    commit: bool | None  # None: a control record type other than ABORT/COMMIT
    coordinator_epoch: int  # -1 when the record is not an end-of-transaction marker
    offset: int  # the control record's offset (the batch's base offset)


def control_key(commit: bool) -> bytes:
    """The control record key of a COMMIT (``commit``) or ABORT marker."""
    return _KEY.pack(CONTROL_RECORD_VERSION, COMMIT if commit else ABORT)


def end_txn_marker_value(coordinator_epoch: int) -> bytes:
    """The control record value of an end-of-transaction marker."""
    return _VALUE.pack(END_TXN_MARKER_VERSION, coordinator_epoch)


def build_control_batch(
    producer_id: int,
    producer_epoch: int,
    *,
    commit: bool,
    coordinator_epoch: int,
    base_offset: int = 0,
    timestamp: int | None = None,
    partition_leader_epoch: int = -1,
) -> bytes:
    """One control batch holding a COMMIT or ABORT marker of ``producer_id``/``producer_epoch``.

    ``timestamp`` (epoch ms) ``None`` means now, as Kafka stamps its markers;
    ``partition_leader_epoch`` is the writing leader's epoch.
    """
    builder = RecordBatchBuilder(
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=NO_SEQUENCE,
        is_transactional=True,
        is_control=True,
    )
    ts = int(time.time() * 1000) if timestamp is None else timestamp
    builder.append(control_key(commit), end_txn_marker_value(coordinator_epoch), ts)
    return builder.build(base_offset, partition_leader_epoch=partition_leader_epoch)


def parse_control_record(key: bytes | None, value: bytes | None) -> tuple[bool | None, int]:
    """``(commit, coordinator_epoch)`` of one control record's key and value.

    ``commit`` is None for a control type that is not ABORT/COMMIT (its
    coordinator epoch is then -1).  A key or value too short for its grammar
    raises :class:`CorruptRecordError`.
    """
    if key is None or len(key) < _KEY.size:
        raise CorruptRecordError(f"control record key of {len(key or b'')} bytes, at least 4 expected")
    _version, kind = _KEY.unpack_from(key)
    if kind not in (ABORT, COMMIT):
        return None, -1
    if value is None or len(value) < _VALUE.size:
        raise CorruptRecordError(f"end transaction marker of {len(value or b'')} bytes, at least 6 expected")
    _version, coordinator_epoch = _VALUE.unpack_from(value)
    return kind == COMMIT, int(coordinator_epoch)


def parse_control_batch(data: bytes | bytearray | memoryview) -> ControlMarker:
    """The marker of the control batch at the start of ``data`` (its first record).

    Raises :class:`CorruptRecordError` when ``data`` does not start with a
    whole control batch holding a record.
    """
    for batch in RecordBatchReader(data, allow_partial_tail=False):
        head = batch.header
        if not head.is_control:
            raise CorruptRecordError(f"batch at offset {head.base_offset} is not a control batch")
        records = batch.records()
        if not records:
            raise CorruptRecordError(f"control batch at offset {head.base_offset} holds no record")
        record = records[0]
        commit, coordinator_epoch = parse_control_record(record.key, record.value)
        return ControlMarker(head.producer_id, head.producer_epoch, commit, coordinator_epoch, record.offset)
    raise CorruptRecordError("no control batch: the data is empty")
