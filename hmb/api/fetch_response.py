"""Assembling a Fetch response around file regions (the zero-copy path).

Construct builds bytes; a Fetch response is mostly record sets that should
go from the page cache to the socket with ``os.sendfile`` and never through
Python.  So the fixed-size fields are packed here with ``struct`` and each
partition's records are a placeholder region.  A property test checks that
the bytes, with regions read back, equal ``kproto.encode_response`` of the
same body at every version (DESIGN.md: a struct fast path needs such a proof).

Fetch response v0-v11 (none of them flexible)::

    size int32, correlation_id int32,
    throttle_time_ms int32                      (v1+)
    error_code int16, session_id int32          (v7+)
    [topic string,
     [partition int32, error_code int16, high_watermark int64,
      last_stable_offset int64                  (v4+)
      log_start_offset int64                    (v5+)
      [aborted_transactions: producer_id int64, first_offset int64]  (v4+)
      preferred_read_replica int32              (v11+)
      records bytes]]
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from hmb.log.partition import FileRegion

_I32 = struct.Struct(">i")
_I16 = struct.Struct(">h")
_I64 = struct.Struct(">q")
_PARTITION_HEAD = struct.Struct(">ihq")  # partition, error_code, high_watermark
_NO_ABORTED = _I32.pack(0)  # an empty aborted-transactions array (never null: trap 3)

Records = bytes | FileRegion | None


@dataclass(frozen=True)
class PartitionData:
    partition: int
    error_code: int
    high_watermark: int
    records: Records
    last_stable_offset: int = -1  # v4+
    log_start_offset: int = -1  # v5+


def _records_len(records: Records) -> int:
    if records is None:
        return 0
    return len(records) if isinstance(records, bytes) else records.length


def build_fetch_response(
    correlation_id: int,
    topics: list[tuple[str, list[PartitionData]]],
    version: int = 0,
    *,
    throttle_time_ms: int = 0,
    error_code: int = 0,
    session_id: int = 0,
) -> list[bytes | FileRegion]:
    """The parts of a Fetch response frame of ``version``, size prefix included.

    Empty records are sent as empty bytes, never null (librdkafka rejects a
    null record set); the aborted-transactions list is empty, never null;
    the preferred read replica (v11) is -1, "read from the leader".
    """
    parts: list[bytes | FileRegion] = []
    buf = bytearray(_I32.pack(0))  # size, patched below
    buf += _I32.pack(correlation_id)
    if version >= 1:
        buf += _I32.pack(throttle_time_ms)
    if version >= 7:
        buf += _I16.pack(error_code) + _I32.pack(session_id)
    buf += _I32.pack(len(topics))
    total = 0
    for name, partitions in topics:
        raw = name.encode()
        buf += _I16.pack(len(raw)) + raw + _I32.pack(len(partitions))
        for pd in partitions:
            n = _records_len(pd.records)
            buf += _PARTITION_HEAD.pack(pd.partition, pd.error_code, pd.high_watermark)
            if version >= 4:
                buf += _I64.pack(pd.last_stable_offset)
                if version >= 5:
                    buf += _I64.pack(pd.log_start_offset)
                buf += _NO_ABORTED
                if version >= 11:
                    buf += _I32.pack(-1)
            buf += _I32.pack(n)
            if isinstance(pd.records, FileRegion):
                parts.append(bytes(buf))
                total += len(buf)
                buf = bytearray()
                parts.append(pd.records)
                total += n
            elif pd.records:
                buf += pd.records
    if buf:
        parts.append(bytes(buf))
        total += len(buf)
    first = bytearray(parts[0])  # type: ignore[arg-type]
    _I32.pack_into(first, 0, total - 4)
    parts[0] = bytes(first)
    return parts
