"""Reading and rewriting one log entry for compaction: which records it holds, and the
same entry with only some of them.

A log entry is one RecordBatch (magic 2), one MessageSet message (magic 0/1) or
one compressed MessageSet wrapper.  Rules this module keeps, as Kafka's cleaner
keeps them:

* Offsets never change.  A rewritten RecordBatch keeps its base offset and its
  last offset delta (so the producer's last sequence stays where it was), its
  records keep their offset deltas, and holes between them are fine.  A
  rewritten magic-1 wrapper is stamped with the offset of its last kept record
  and its inner relative offsets are kept, which gives every kept record the
  absolute offset it had; magic-0 inner offsets are absolute already.
* Everything else in a batch header stays: partition leader epoch, producer
  id, epoch and base sequence, the transactional flag, the codec (a compressed
  batch is recompressed with its own codec) and the timestamp type.  A kept
  record's bytes are copied as they are, except its timestamp delta when the
  base timestamp moves (below).
* Tombstones (records with a null value) of a RecordBatch get a *delete
  horizon* the first time a cleaning keeps them (KIP-534): bit 6 of the
  attributes is set and the base timestamp field holds the horizon, the epoch
  millisecond after which the cleaner may drop them.  The records' timestamp
  deltas are re-encoded against it, so each record keeps its timestamp.
* Control batches are never rewritten here: whether one stays is the caller's
  decision, taken whole (see ``hmb.log.cleaner.rules``).
* An entry left with no record disappears, unless the caller asks for the
  empty batch to stay (the last batch of an idempotent producer: its header
  carries the producer's sequence state).

Pure functions on bytes; nothing here knows files or which record is the latest.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import NamedTuple

from kproto.errors import CorruptRecordError
from kproto.records.compression import DEFAULT_MAX_DECOMPRESSED, decompress
from kproto.records.compression import compress as _compress
from kproto.records.crc import crc32c
from kproto.records.default import (
    _CRC_PART,
    _MAX_CODEC,
    _PREFIX,
    _ZZ1,
    CODEC_MASK,
    CONTROL_MASK,
    DELETE_HORIZON_MASK,
    HEADER,
    MAGIC,
    RECORD_BATCH_OVERHEAD,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_MASK,
    _read_varint,
    _varint,
)
from kproto.records.entry import ENTRY_HEAD, LOG_OVERHEAD, MAGIC_OFFSET
from kproto.records.legacy import _encode as _encode_legacy
from kproto.records.legacy import _parse_message, _wrapper_payload

__all__ = [
    "EntryInfo",
    "RecordInfo",
    "entry_info",
    "entry_records",
    "filter_entry",
    "first_keyless",
    "split_entries",
]

NO_HORIZON = -1


class RecordInfo(NamedTuple):
    """What the cleaner decides a record's fate by."""

    offset: int
    key: bytes | None
    tombstone: bool  # the value is null
    timestamp: int  # epoch ms; -1 for magic 0


class EntryInfo(NamedTuple):
    """The header facts of one entry that compaction rules need."""

    magic: int
    base_offset: int
    last_offset: int
    producer_id: int  # -1: none (always below magic 2)
    producer_epoch: int
    transactional: bool
    control: bool
    delete_horizon_ms: int  # NO_HORIZON unless a RecordBatch carries one


def entry_info(entry: bytes | memoryview) -> EntryInfo:
    """The header of the entry ``entry`` holds exactly."""
    offset, _size = ENTRY_HEAD.unpack_from(entry, 0)
    magic = entry[MAGIC_OFFSET]
    if magic < MAGIC:
        return EntryInfo(magic, int(offset), int(offset), -1, -1, False, False, NO_HORIZON)
    f = HEADER.unpack_from(entry, 0)
    attrs = f[5]
    horizon = f[7] if attrs & DELETE_HORIZON_MASK else NO_HORIZON
    return EntryInfo(
        magic,
        f[0],
        f[0] + f[6],
        f[9],
        f[10],
        bool(attrs & TRANSACTIONAL_MASK),
        bool(attrs & CONTROL_MASK),
        horizon,
    )


# ---------------------------------------------------------------------------- magic 2


class _V2Record(NamedTuple):
    start: int  # the record's length varint
    ts_end: int  # the first byte after its timestamp delta (its offset delta)
    end: int
    info: RecordInfo


def _v2_payload(entry: bytes | memoryview, fields: tuple[int, ...], max_decompressed: int) -> bytes:
    codec = fields[5] & CODEC_MASK
    body = bytes(entry[RECORD_BATCH_OVERHEAD : LOG_OVERHEAD + fields[1]])
    if not codec:
        return body
    if codec > _MAX_CODEC:
        raise CorruptRecordError(f"unknown compression codec {codec} in a record batch")
    return decompress(codec, body, max_size=max_decompressed)


def _v2_records(payload: bytes, fields: tuple[int, ...]) -> list[_V2Record]:
    """Each record's place in ``payload`` and what the cleaner decides by.

    One-byte varints (most lengths and deltas) are decoded inline, as the reader does.
    """
    base_offset, base_ts, count = fields[0], fields[7], fields[12]
    out: list[_V2Record] = []
    append = out.append
    zz = _ZZ1
    varint = _read_varint
    pos = 0
    try:
        for _ in range(count):
            b = payload[pos]
            if b < 0x80:
                length, body = zz[b], pos + 1
            elif payload[pos + 1] < 0x80:  # two bytes: most records are 64 B .. 8 KiB
                u = (b & 0x7F) | payload[pos + 1] << 7
                length, body = (u >> 1) ^ -(u & 1), pos + 2
            else:
                length, body = varint(payload, pos)
            end = body + length
            b = payload[body + 1]
            ts_delta, ts_end = (zz[b], body + 2) if b < 0x80 else varint(payload, body + 1, 10)
            b = payload[ts_end]
            offset_delta, p = (zz[b], ts_end + 1) if b < 0x80 else varint(payload, ts_end)
            b = payload[p]
            klen, p = (zz[b], p + 1) if b < 0x80 else varint(payload, p)
            key = None if klen < 0 else payload[p : p + klen]
            if klen > 0:
                p += klen
            b = payload[p]
            if b < 0x80:
                vlen, p = zz[b], p + 1
            elif payload[p + 1] < 0x80:
                u = (b & 0x7F) | payload[p + 1] << 7
                vlen, p = (u >> 1) ^ -(u & 1), p + 2
            else:
                vlen, p = varint(payload, p)
            if end > len(payload) or p + max(vlen, 0) > end:
                raise CorruptRecordError(f"record at byte {pos} runs past its batch")
            info = RecordInfo(base_offset + offset_delta, key, vlen < 0, base_ts + ts_delta)
            append(_V2Record(pos, ts_end, end, info))
            pos = end
    except IndexError:
        raise CorruptRecordError("record batch truncated inside a record") from None
    if pos != len(payload):
        raise CorruptRecordError(f"record batch holds {len(payload) - pos} bytes after its records")
    return out


def _filter_v2(
    entry: bytes | memoryview,
    keep: Callable[[RecordInfo], bool],
    keep_empty: bool,
    new_horizon_ms: int,
    max_decompressed: int,
) -> tuple[bytes | memoryview, int]:
    fields = HEADER.unpack_from(entry, 0)
    attrs = fields[5]
    if attrs & CONTROL_MASK:
        return entry, fields[12]
    payload_src = _v2_payload(entry, fields, max_decompressed)
    records = _v2_records(payload_src, fields)
    kept = [r for r in records if keep(r.info)]
    set_horizon = (
        new_horizon_ms >= 0 and not attrs & DELETE_HORIZON_MASK and any(r.info.tombstone for r in kept)
    )
    if len(kept) == len(records) and not set_horizon:
        return entry, len(kept)
    if not kept and not keep_empty:
        return b"", 0
    base_ts = fields[7]
    if set_horizon:
        attrs |= DELETE_HORIZON_MASK
        base_ts = new_horizon_ms
    parts: list[bytes] = []
    for r in kept:
        if base_ts == fields[7]:
            parts.append(payload_src[r.start : r.end])
        else:  # the timestamp delta is re-encoded against the new base; the rest is as it was
            delta = _varint(r.info.timestamp - base_ts)
            rest = payload_src[r.ts_end : r.end]
            attr_byte = payload_src[_read_varint(payload_src, r.start)[1]]
            parts.append(_varint(1 + len(delta) + len(rest)) + bytes((attr_byte,)) + delta + rest)
    payload = b"".join(parts)
    codec = attrs & CODEC_MASK
    if codec and kept:
        payload = _compress(codec, payload)
    elif not kept:  # an empty batch is written uncompressed, as Kafka writes one
        attrs &= ~CODEC_MASK
    if attrs & TIMESTAMP_TYPE_MASK or not kept:  # LogAppendTime, or an empty batch: the stamp stays
        max_ts = fields[8]
    else:
        max_ts = max(r.info.timestamp for r in kept)
    if not kept and not set_horizon:
        base_ts = fields[8]  # an empty batch states one timestamp, as Kafka writes it
    tail = _CRC_PART.pack(attrs, fields[6], base_ts, max_ts, fields[9], fields[10], fields[11], len(kept))
    length = len(tail) + len(payload) + 9  # partitionLeaderEpoch, magic, crc
    crc = crc32c(payload, crc32c(tail))
    return b"".join((_PREFIX.pack(fields[0], length, fields[2], MAGIC, crc), tail, payload)), len(kept)


# ---------------------------------------------------------------------------- magic 0/1


def _legacy_inner(
    entry: bytes, msg: tuple[int, ...], max_decompressed: int
) -> list[tuple[int, int, RecordInfo]]:
    """(start, end, record) of each message inside a wrapper, with absolute offsets."""
    magic = msg[3]
    inner = _wrapper_payload(entry, msg, max_decompressed)  # type: ignore[arg-type]
    parsed = []
    pos = 0
    while pos < len(inner):
        m = _parse_message(inner, pos, len(inner))
        if m is None or m[3] != magic or m[4] & CODEC_MASK:
            raise CorruptRecordError("bad message inside a compressed wrapper")
        parsed.append((pos, m))
        pos = m[0]
    if not parsed:
        raise CorruptRecordError("compressed message with no inner messages")
    shift = msg[1] - parsed[-1][1][1] if magic == 1 and msg[1] != 0 else 0
    out = []
    for start, m in parsed:
        ts = -1 if magic == 0 else (msg[5] if msg[4] & TIMESTAMP_TYPE_MASK else m[5])
        key = None if m[6] < 0 else inner[m[6] : m[7]]
        out.append((start, m[0], RecordInfo(m[1] + shift, key, m[8] < 0, ts)))
    return out


def _legacy_records(entry: bytes, max_decompressed: int) -> list[RecordInfo]:
    msg = _parse_message(entry, 0, len(entry))
    if msg is None:
        raise CorruptRecordError("message truncated")
    if msg[4] & CODEC_MASK:
        return [r for _s, _e, r in _legacy_inner(entry, msg, max_decompressed)]
    key = None if msg[6] < 0 else entry[msg[6] : msg[7]]
    return [RecordInfo(msg[1], key, msg[8] < 0, -1 if msg[3] == 0 else msg[5])]


def _filter_legacy(
    entry: bytes, keep: Callable[[RecordInfo], bool], max_decompressed: int
) -> tuple[bytes, int]:
    msg = _parse_message(entry, 0, len(entry))
    if msg is None:
        raise CorruptRecordError("message truncated")
    if not msg[4] & CODEC_MASK:
        [record] = _legacy_records(entry, max_decompressed)
        return (entry, 1) if keep(record) else (b"", 0)
    inner_records = _legacy_inner(entry, msg, max_decompressed)
    kept = [(s, e, r) for s, e, r in inner_records if keep(r)]
    if len(kept) == len(inner_records):
        return entry, len(kept)
    if not kept:
        return b"", 0
    inner = _wrapper_payload(entry, msg, max_decompressed)
    magic, attrs, codec = msg[3], msg[4], msg[4] & CODEC_MASK
    payload = _compress(codec, b"".join(inner[s:e] for s, e, _r in kept), legacy_lz4=magic == 0)
    last = kept[-1][2].offset
    wrapper = _encode_legacy([(None, payload, msg[5])], magic, last, attrs)
    return b"".join(wrapper), len(kept)


# ---------------------------------------------------------------------------- entry points


def entry_records(entry: bytes, *, max_decompressed: int = DEFAULT_MAX_DECOMPRESSED) -> list[RecordInfo]:
    """Every record of one entry (a control batch's too), decompressed as needed."""
    if entry[MAGIC_OFFSET] < MAGIC:
        return _legacy_records(entry, max_decompressed)
    fields = HEADER.unpack_from(entry, 0)
    return [r.info for r in _v2_records(_v2_payload(entry, fields, max_decompressed), fields)]


def filter_entry(
    entry: bytes,
    keep: Callable[[RecordInfo], bool],
    *,
    keep_empty: bool = False,
    new_horizon_ms: int = NO_HORIZON,
    max_decompressed: int = DEFAULT_MAX_DECOMPRESSED,
) -> tuple[bytes, int]:
    """``entry`` with only the records ``keep`` accepts, and how many those are.

    Returns ``entry`` itself when nothing changes, ``b""`` when nothing is left
    (unless ``keep_empty``: a RecordBatch then stays with no record).
    ``new_horizon_ms`` (>= 0): the delete horizon to stamp on a RecordBatch
    that keeps a tombstone and has none yet.  A control batch is returned as it
    is.  Raises :class:`CorruptRecordError` on bytes it cannot read.
    """
    if entry[MAGIC_OFFSET] < MAGIC:
        return _filter_legacy(entry, keep, max_decompressed)
    out, count = _filter_v2(entry, keep, keep_empty, new_horizon_ms, max_decompressed)
    return bytes(out), count


def split_entries(data: bytes) -> Iterable[bytes]:
    """The complete entries of a record set, each as its own bytes."""
    pos = 0
    while len(data) - pos >= LOG_OVERHEAD:
        size = LOG_OVERHEAD + ENTRY_HEAD.unpack_from(data, pos)[1]
        if pos + size > len(data):
            return
        yield data[pos : pos + size]
        pos += size


def first_keyless(data: bytes, *, max_decompressed: int = DEFAULT_MAX_DECOMPRESSED) -> int | None:
    """The position (0-based, over the whole record set) of the first data record without
    a key, or None: a compacted topic refuses such a record set whole.  Control batches,
    which a producer never sends, count as data here too."""
    index = 0
    for entry in split_entries(data):
        for record in entry_records(entry, max_decompressed=max_decompressed):
            if record.key is None:
                return index
            index += 1
    return None
