"""Fetch response v0-v11 with ``struct``, around record sets that never pass through Python.

The grammar builds bytes; a Fetch response is mostly record sets that should go
from the page cache to the socket with ``os.sendfile``.  So the fixed-size
fields are packed here with ``struct`` and each partition's records may be a
*region*: anything with a ``length`` (:class:`Region`), which is handed back
untouched in the list of parts for the caller to send as it likes.  This
module knows nothing of files; the broker's file region is one such object.

The grammar in :mod:`kproto.messages.fetch` stays the reference: property tests
check that the parts, with every region replaced by its bytes, are byte for
byte ``kproto.encode_response`` of the same body at every version kproto
declares (a struct fast path is only trusted with such a proof).

Rules of this module:

* Empty records are sent as empty bytes, never null (librdkafka rejects a
  null record set).
* The aborted-transactions list (v4+) is the partition's ``aborted``
  (producer id, first offset) pairs; with none (``None`` or empty, every
  read_uncommitted answer) it is an empty list, never null: librdkafka,
  which reads ``read_committed`` by default, wants the list.
* The preferred read replica (v11) is -1, "read from the leader".
* A version this encoder does not know raises ``ValueError``.

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
from collections.abc import Sequence
from typing import Generic, NamedTuple, Protocol, TypeVar

__all__ = ["MAX_VERSION", "PartitionData", "Region", "build_fetch_response"]

MAX_VERSION = 11

_I32 = struct.Struct(">i")
_I16 = struct.Struct(">h")
_I64 = struct.Struct(">q")
_PARTITION_HEAD = struct.Struct(">ihq")  # partition, error_code, high_watermark
_NO_ABORTED = _I32.pack(0)  # an empty aborted-transactions array, never null
_ABORTED = struct.Struct(">qq")  # producer_id, first_offset
_NO_PREFERRED_REPLICA = _I32.pack(-1)


class Region(Protocol):
    """Records that are not bytes here: only their length goes into the frame."""

    @property
    def length(self) -> int: ...


R = TypeVar("R", bound=Region)


class PartitionData(NamedTuple, Generic[R]):
    """One partition of the response; ``records`` bytes, a region, or None (sent as empty)."""

    partition: int
    error_code: int
    high_watermark: int
    records: bytes | R | None
    last_stable_offset: int = -1  # v4+
    log_start_offset: int = -1  # v5+
    aborted: list[tuple[int, int]] | None = None  # v4+: (producer_id, first_offset) pairs


def build_fetch_response(
    correlation_id: int,
    topics: Sequence[tuple[str, Sequence[PartitionData[R]]]],
    version: int = 0,
    *,
    throttle_time_ms: int = 0,
    error_code: int = 0,
    session_id: int = 0,
) -> list[bytes | R]:
    """The parts of a Fetch response frame of ``version``, size prefix included.

    Bytes parts alternate with the regions of ``topics``, each region being
    the very object given (never copied).
    """
    if not 0 <= version <= MAX_VERSION:
        raise ValueError(f"Fetch response v{version} is not v0-v{MAX_VERSION}")
    parts: list[bytes | R] = []
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
            records = pd.records
            buf += _PARTITION_HEAD.pack(pd.partition, pd.error_code, pd.high_watermark)
            if version >= 4:
                buf += _I64.pack(pd.last_stable_offset)
                if version >= 5:
                    buf += _I64.pack(pd.log_start_offset)
                aborted = pd.aborted
                if aborted:
                    buf += _I32.pack(len(aborted))
                    for pair in aborted:
                        buf += _ABORTED.pack(*pair)
                else:
                    buf += _NO_ABORTED
                if version >= 11:
                    buf += _NO_PREFERRED_REPLICA
            if records is None:
                buf += _I32.pack(0)
            elif isinstance(records, (bytes, bytearray)):
                buf += _I32.pack(len(records))
                buf += records
            else:
                buf += _I32.pack(records.length)
                parts.append(bytes(buf))
                total += len(buf)
                buf = bytearray()
                parts.append(records)
                total += records.length
    if buf:
        parts.append(bytes(buf))
        total += len(buf)
    first = bytearray(parts[0])  # type: ignore[arg-type]  # the first part is always bytes
    _I32.pack_into(first, 0, total - 4)
    parts[0] = bytes(first)
    return parts
