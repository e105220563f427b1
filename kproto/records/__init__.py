"""Record-set codecs: the legacy MessageSet (magic 0/1) and compression helpers.

Sans-I/O: functions from bytes to records and back, nothing else.
"""

from __future__ import annotations

from kproto.records.compression import (
    DEFAULT_MAX_DECOMPRESSED,
    Compression,
    compress,
    decompress,
    xxh32,
)
from kproto.records.legacy import (
    LegacyRecord,
    MessageSetBuilder,
    MessageSetReader,
    RecordTooLargeError,
    build_message_set,
    read_message_set,
)
from kproto.records.legacy_assign import AssignResult, assign_offsets

__all__ = [
    "DEFAULT_MAX_DECOMPRESSED",
    "AssignResult",
    "Compression",
    "LegacyRecord",
    "MessageSetBuilder",
    "MessageSetReader",
    "RecordTooLargeError",
    "assign_offsets",
    "build_message_set",
    "compress",
    "decompress",
    "read_message_set",
    "xxh32",
]
