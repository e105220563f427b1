"""Decoding one partition's record set from a fetch response, whatever its format.

A partition's log may hold MessageSets (magic 0/1, Kafka 0.8-0.10
producers) and RecordBatches (magic 2) side by side, and a fetch response
returns its bytes as they are: :func:`kproto.records.read_records` reads
them all as one record type (control batches skipped, compressed entries
expanded, CRCs checked).  What it does not say is where the consumer goes
next: a response's record set ends with a partial entry (cut by
``partition_max_bytes``), and an entry may hold no data records at all (a
transaction marker, or only records below the fetch offset).  So the entry
framing -- ``offset int64, size int32`` then the magic at byte 16, common to
all formats -- is walked here to find the offset after the last complete
entry, which is where the next fetch starts.

``read_committed`` also needs the batches' producer ids, to drop the records
of transactions the broker lists as aborted (Kafka's consumer algorithm:
a producer's batches are skipped from an aborted transaction's first offset
until that producer's abort marker).
"""

from __future__ import annotations

import struct
from typing import Any

from kproto.records import DefaultRecord, RecordBatchReader, read_records

_ENTRY = struct.Struct(">qi")  # offset / baseOffset, size / batchLength
_LAST_OFFSET_DELTA = struct.Struct(">i")
_MAGIC_AT = 16
_LAST_OFFSET_DELTA_AT = 23
_BATCH_OVERHEAD = 61


def next_fetch_offset(data: bytes) -> int:
    """The offset after the last complete entry of ``data``; -1 when none is complete."""
    end = len(data)
    pos = 0
    after = -1
    unpack = _ENTRY.unpack_from
    while end - pos > _MAGIC_AT:
        offset, size = unpack(data, pos)
        entry_end = pos + 12 + size
        if entry_end > end or size < 5:  # partial tail (or garbage: the decoder will say)
            break
        if data[pos + _MAGIC_AT] >= 2:
            if size < _BATCH_OVERHEAD - 12:
                break
            after = offset + _LAST_OFFSET_DELTA.unpack_from(data, pos + _LAST_OFFSET_DELTA_AT)[0] + 1
        else:
            after = offset + 1  # a compressed wrapper carries its last inner offset
        pos = entry_end
    return after


def committed_records(data: bytes, aborted: list[Any] | None) -> list[DefaultRecord]:
    """The data records of ``data`` minus those of aborted transactions (read_committed).

    ``aborted`` is the response's ``aborted_transactions`` (producer_id,
    first_offset); without any, this is :func:`read_records`.
    """
    if not aborted:
        return read_records(data)
    pending = sorted(((a.first_offset, a.producer_id) for a in aborted), reverse=True)
    ongoing: set[int] = set()
    out: list[DefaultRecord] = []
    end = len(data)
    pos = 0
    while end - pos > _MAGIC_AT:
        size = _ENTRY.unpack_from(data, pos)[1]
        entry_end = pos + 12 + size
        if entry_end > end:
            break
        chunk = data[pos:entry_end]
        pos = entry_end
        if chunk[_MAGIC_AT] < 2:
            out.extend(read_records(chunk))  # no transactions before magic 2
            continue
        for batch in RecordBatchReader(chunk, allow_partial_tail=False):
            h = batch.header
            while pending and pending[-1][0] <= h.last_offset:
                ongoing.add(pending.pop()[1])
            if h.is_control:
                if h.producer_id in ongoing:
                    records = batch.records()
                    # control record key: version int16, type int16 (0 abort, 1 commit)
                    if records and records[0].key is not None and records[0].key[2:4] == b"\x00\x00":
                        ongoing.discard(h.producer_id)
                continue
            if h.is_transactional and h.producer_id in ongoing:
                continue
            out.extend(batch.records())
    return out
