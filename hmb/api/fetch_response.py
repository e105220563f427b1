"""Assembling a Fetch response around file regions (the zero-copy path).

Construct builds bytes; a Fetch response is mostly record sets that should
go from the page cache to the socket with ``os.sendfile`` and never through
Python.  So the fixed-size fields are packed here with ``struct`` and each
partition's records are a placeholder region.  A property test checks that
the bytes, with regions read back, equal ``kproto.encode_response`` of the
same body (DESIGN.md: a struct fast path needs such a proof).

Fetch v0 response::

    size int32, correlation_id int32,
    [topic string, [partition int32, error_code int16, high_watermark int64, records bytes]]
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from hmb.log.partition import FileRegion

_I32 = struct.Struct(">i")
_I16 = struct.Struct(">h")
_PARTITION_HEAD = struct.Struct(">ihqi")  # partition, error_code, high_watermark, records length

Records = bytes | FileRegion | None


@dataclass(frozen=True)
class PartitionData:
    partition: int
    error_code: int
    high_watermark: int
    records: Records


def _records_len(records: Records) -> int:
    if records is None:
        return 0
    return len(records) if isinstance(records, bytes) else records.length


def build_fetch_response(
    correlation_id: int, topics: list[tuple[str, list[PartitionData]]]
) -> list[bytes | FileRegion]:
    """The parts of a Fetch v0 response frame, size prefix included.

    Empty records are sent as empty bytes, never null (librdkafka rejects a
    null record set).
    """
    parts: list[bytes | FileRegion] = []
    buf = bytearray(_I32.pack(0))  # size, patched below
    buf += _I32.pack(correlation_id)
    buf += _I32.pack(len(topics))
    total = 0
    for name, partitions in topics:
        raw = name.encode()
        buf += _I16.pack(len(raw)) + raw + _I32.pack(len(partitions))
        for pd in partitions:
            n = _records_len(pd.records)
            buf += _PARTITION_HEAD.pack(pd.partition, pd.error_code, pd.high_watermark, n)
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
