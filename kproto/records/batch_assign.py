"""The broker's hot path for record sets of any magic: validate and number in place.

A produce request's records may be RecordBatches (magic 2) or MessageSets (magic 0/1) --
Kafka accepts any message format in any request version (real clients do send magic 1
inside Produce v0), and so does this codec; which formats a request may carry is the
broker's decision, not the codec's.  :func:`assign_batches` walks the entries, hands
every run of magic 0/1 messages to the MessageSet loop of
:mod:`kproto.records.legacy_assign`, and for each magic-2 batch:

* checks the framing (batchLength at least the 49 bytes of header it must cover, batch
  complete) and the CRC-32C over attributes .. end, *without decompressing*;
* checks what Kafka's ``LogValidator.validateBatch`` checks from header fields alone:
  a valid codec, ``recordCount > 0`` and ``lastOffsetDelta == recordCount - 1``, no
  control batch from a client, a base sequence when there is a producer id (control
  batches, the coordinator's transaction markers, have none);
* rejects a batch larger than ``max_message_bytes`` (Kafka's ``max.message.bytes``
  limits the whole batch, its 12-byte offset/length prefix included);
* patches ``baseOffset`` (outside the CRC: nothing is recomputed) and, when asked, the
  ``partitionLeaderEpoch`` (also outside the CRC, Kafka's leader stamps it);
* records what idempotence needs: a :class:`ProducerBatch` per magic-2 batch.

:func:`assign_offsets_any` is the same with :class:`~kproto.records.AssignResult`
(count, last_offset, max_timestamp, buf) as result, for callers of ``assign_offsets``.
"""

from __future__ import annotations

from typing import NamedTuple

from kproto.errors import CorruptRecordError
from kproto.records.compression import DEFAULT_MAX_DECOMPRESSED
from kproto.records.crc import crc32c
from kproto.records.default import (
    _MAX_CODEC,
    ATTRIBUTES_OFFSET,
    CODEC_MASK,
    CONTROL_MASK,
    HEADER,
    LOG_OVERHEAD,
    MIN_BATCH_LENGTH,
    PARTITION_LEADER_EPOCH_OFFSET,
    RECORD_BATCH_OVERHEAD,
    TRANSACTIONAL_MASK,
    _batch_records,
)
from kproto.records.entry import MAGIC_OFFSET
from kproto.records.legacy import _INT32, _INT64, _INT64_MAX, NO_TIMESTAMP, RecordTooLargeError
from kproto.records.legacy_assign import AssignResult, apply_splices, assign_run

__all__ = ["BatchAssignResult", "ProducerBatch", "assign_batches", "assign_offsets_any"]


class ProducerBatch(NamedTuple):
    """Producer state of one magic-2 batch, as the broker's idempotence checks need it.

    ``base_offset`` is the offset assigned to the batch's first record; the batch covers
    ``base_offset .. base_offset + last_offset_delta``, sequences ``base_sequence ..
    base_sequence + last_offset_delta`` (wrapping at 2**31 as Kafka's do).
    ``producer_id`` -1 means a plain (non-idempotent) producer.
    """

    producer_id: int
    producer_epoch: int
    base_sequence: int
    last_offset_delta: int
    base_offset: int
    is_transactional: bool


class BatchAssignResult(NamedTuple):
    """:class:`~kproto.records.AssignResult`'s four fields, then the magic-2 batches.

    ``producer_batches`` lists every magic-2 batch in order (magic 0/1 messages carry no
    producer state).
    """

    count: int  # type: ignore[assignment]  # shadows tuple.count; the name is the API
    last_offset: int
    max_timestamp: int
    buf: bytes | bytearray
    producer_batches: list[ProducerBatch]


def assign_batches(
    buf: bytes | bytearray,
    next_offset: int,
    *,
    max_message_bytes: int | None = None,
    max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED,
    partition_leader_epoch: int | None = None,
    allow_control_batches: bool = False,
    validate_records: bool = False,
) -> BatchAssignResult:
    """Validate a produced record set of any magic mix and number it from ``next_offset``.

    Magic 0/1 entries get exactly the treatment of :func:`~kproto.records.assign_offsets`
    (per message; magic-0 wrappers are recompressed, then ``buf`` is a new ``bytes``);
    magic-2 batches the checks of the module docstring.  Any entry cut short raises
    :class:`CorruptRecordError` (a producer never sends one); an entry over
    ``max_message_bytes`` raises :class:`RecordTooLargeError`.

    ``partition_leader_epoch``: write it into every magic-2 batch (``None``: leave it).
    ``allow_control_batches``: accept control batches (the broker writing its own
    transaction markers).  ``validate_records``: also decompress (bounded by
    ``max_decompressed_bytes``) and decode every magic-2 batch's records and check their
    offset deltas are ``0 .. n-1`` -- what Kafka's broker does, off by default because it
    costs one decode per record.  A ``bytes`` argument is copied into a new bytearray.
    """
    if not isinstance(buf, bytearray):
        buf = bytearray(buf)
    end = len(buf)
    limit = _INT64_MAX if max_message_bytes is None else max_message_bytes
    offset = next_offset
    max_ts = NO_TIMESTAMP
    splices: list[tuple[int, int, bytes]] = []
    producers: list[ProducerBatch] = []
    unpack = HEADER.unpack_from
    patch64 = _INT64.pack_into
    # Batches are read from ``buf`` itself: patching a batch's first bytes after checking
    # it changes nothing still to be read.  The MessageSet loop wants a bytes snapshot
    # (cheapest to slice for zlib.crc32): made once, if a magic 0/1 entry shows up.
    data: bytes | None = None
    view = memoryview(buf)
    pos = 0
    try:
        while pos < end:
            if end - pos <= MAGIC_OFFSET or buf[pos + MAGIC_OFFSET] != 2:
                if data is None:
                    data = bytes(buf)
                pos, offset, ts = assign_run(
                    buf,
                    data,
                    pos,
                    end,
                    offset,
                    limit,
                    max_decompressed_bytes,
                    splices,
                    stop_at_batch=True,
                )
                if ts > max_ts:
                    max_ts = ts
                continue
            if end - pos < RECORD_BATCH_OVERHEAD:
                raise CorruptRecordError(f"record batch truncated at byte {pos}")
            fields = unpack(buf, pos)
            _, length, _, _, crc, attrs, lod, _, mts, pid, epoch, seq, count = fields
            bend = pos + LOG_OVERHEAD + length
            if length < MIN_BATCH_LENGTH:
                raise CorruptRecordError(f"record batch length {length} too small at byte {pos}")
            if bend > end:
                raise CorruptRecordError(f"record batch truncated at byte {pos}")
            if length + LOG_OVERHEAD > limit:
                raise RecordTooLargeError(length + LOG_OVERHEAD, limit)
            if crc32c(view[pos + ATTRIBUTES_OFFSET : bend]) != crc:
                raise CorruptRecordError(f"CRC-32C mismatch in the record batch at byte {pos}")
            _check_header(pos, attrs, lod, pid, seq, count, allow_control_batches)
            if validate_records:
                _check_records(bytes(view[pos:bend]), fields, max_decompressed_bytes)
            patch64(buf, pos, offset)
            if partition_leader_epoch is not None:
                _INT32.pack_into(buf, pos + PARTITION_LEADER_EPOCH_OFFSET, partition_leader_epoch)
            producers.append(ProducerBatch(pid, epoch, seq, lod, offset, bool(attrs & TRANSACTIONAL_MASK)))
            offset += count
            if mts > max_ts:
                max_ts = mts
            pos = bend
    finally:
        view.release()
    result = apply_splices(buf, splices)
    return BatchAssignResult(offset - next_offset, offset - 1, max_ts, result, producers)


def _check_header(
    pos: int, attrs: int, lod: int, pid: int, seq: int, count: int, allow_control: bool
) -> None:
    """Kafka's header-only checks of a produced batch (``LogValidator.validateBatch``)."""
    if attrs & CODEC_MASK > _MAX_CODEC:
        raise CorruptRecordError(f"unknown compression codec {attrs & CODEC_MASK} at byte {pos}")
    if count <= 0:
        raise CorruptRecordError(f"record batch with record count {count} at byte {pos}")
    if lod != count - 1:
        raise CorruptRecordError(f"record batch at byte {pos}: lastOffsetDelta {lod} but {count} records")
    if attrs & CONTROL_MASK and not allow_control:
        raise CorruptRecordError(f"control batch from a producer at byte {pos}")
    if pid >= 0 and seq < 0 and not attrs & CONTROL_MASK:  # markers carry no sequence
        raise CorruptRecordError(f"producer id {pid} without a base sequence at byte {pos}")


def _check_records(batch: bytes, fields: tuple[int, ...], max_decompressed: int) -> None:
    """Decode the records of one batch (``batch``: its bytes); offset deltas ``0 .. n-1``."""
    records = _batch_records(batch, 0, fields, max_decompressed)
    base = fields[0]
    for i, record in enumerate(records):
        if record[0] - base != i:
            raise CorruptRecordError(f"record batch: offset delta {record[0] - base} at index {i}")


def assign_offsets_any(
    buf: bytearray,
    next_offset: int,
    *,
    max_message_bytes: int | None = None,
    max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED,
    partition_leader_epoch: int | None = None,
) -> AssignResult:
    """:func:`assign_batches` without the producer details: an ``AssignResult``."""
    r = assign_batches(
        buf,
        next_offset,
        max_message_bytes=max_message_bytes,
        max_decompressed_bytes=max_decompressed_bytes,
        partition_leader_epoch=partition_leader_epoch,
    )
    return AssignResult(r[0], r[1], r[2], r[3])
