"""Record-set codecs: MessageSet (magic 0/1), RecordBatch (magic 2), compression helpers.

Sans-I/O: functions from bytes to records and back, nothing else.
"""

from __future__ import annotations

from kproto.records.batch_assign import (
    BatchAssignResult,
    ProducerBatch,
    assign_batches,
    assign_offsets_any,
)
from kproto.records.compression import (
    DEFAULT_MAX_DECOMPRESSED,
    Compression,
    compress,
    decompress,
    xxh32,
)
from kproto.records.convert import downconvert, read_records
from kproto.records.default import (
    DefaultRecord,
    DefaultRecordBatch,
    RecordBatchHeader,
    RecordBatchReader,
    read_record_batches,
)
from kproto.records.default_builder import RecordBatchBuilder
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
    "BatchAssignResult",
    "Compression",
    "DefaultRecord",
    "DefaultRecordBatch",
    "LegacyRecord",
    "MessageSetBuilder",
    "MessageSetReader",
    "ProducerBatch",
    "RecordBatchBuilder",
    "RecordBatchHeader",
    "RecordBatchReader",
    "RecordTooLargeError",
    "assign_batches",
    "assign_offsets",
    "assign_offsets_any",
    "build_message_set",
    "compress",
    "decompress",
    "downconvert",
    "read_message_set",
    "read_record_batches",
    "read_records",
    "xxh32",
]
