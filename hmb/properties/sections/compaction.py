"""The "Log compaction" settings: The log cleaner and the topic settings that decide when it cleans.

How to add one: see :mod:`hmb.properties.table`.
"""

from __future__ import annotations

from hmb.properties.model import (
    BOOLEAN,
    INT,
    LONG,
    POSITIVE_DOUBLE,
    RATIO,
    Property,
)

COMPACTION = "Log compaction"

PROPERTIES: tuple[Property, ...] = (
    Property(
        "log.cleaner.enable",
        BOOLEAN,
        True,
        "Whether the log cleaner runs; without it compacted topics only grow.",
        COMPACTION,
        attr="log_cleaner_enable",
    ),
    Property(
        "log.cleaner.threads",
        INT,
        1,
        "How many background threads clean logs, each one partition at a time.",
        COMPACTION,
        attr="log_cleaner_threads",
        at_least=0,
    ),
    Property(
        "log.cleaner.dedupe.buffer.size",
        LONG,
        134_217_728,
        "Memory for the cleaners' maps of key hash to latest offset, shared by the threads; "
        "each entry counts 24 bytes (a 16-byte MD5 of the key and an offset), as Kafka counts "
        "them. A log with more keys than fit is cleaned in several passes.",
        COMPACTION,
        attr="log_cleaner_dedupe_buffer_size",
        at_least=1024,
        unit="bytes",
    ),
    Property(
        "log.cleaner.io.max.bytes.per.second",
        POSITIVE_DOUBLE,
        1.7976931348623157e308,
        "The most bytes per second the cleaners read and write together; the default is no limit.",
        COMPACTION,
        attr="log_cleaner_io_max_bytes_per_second",
        shown_default="no limit",
    ),
    Property(
        "log.cleaner.backoff.ms",
        LONG,
        15_000,
        "How long a cleaner thread sleeps when no log needs cleaning.",
        COMPACTION,
        attr="log_cleaner_backoff_ms",
        at_least=0,
        unit="ms",
    ),
    Property(
        "log.cleaner.delete.retention.ms",
        LONG,
        86_400_000,
        "How long a tombstone (a record with a null value) of a compacted topic stays readable "
        "after the cleaner first passes it, so that a consumer reading from the start sees it.",
        COMPACTION,
        attr="delete_retention_ms",
        topic="delete.retention.ms",
        at_least=0,
        unit="ms",
    ),
    Property(
        "log.cleaner.min.compaction.lag.ms",
        LONG,
        0,
        "How old a record must be before the cleaner may remove an earlier record of its key.",
        COMPACTION,
        attr="min_compaction_lag_ms",
        topic="min.compaction.lag.ms",
        at_least=0,
        unit="ms",
    ),
    Property(
        "log.cleaner.max.compaction.lag.ms",
        LONG,
        2**63 - 1,
        "How long a record may stay uncompacted: a log with older dirty records is cleaned "
        "whatever its dirty ratio.",
        COMPACTION,
        attr="max_compaction_lag_ms",
        topic="max.compaction.lag.ms",
        at_least=1,
        unit="ms",
        shown_default="no limit",
    ),
    Property(
        "log.cleaner.min.cleanable.ratio",
        RATIO,
        0.5,
        "The share of a log's bytes that must be dirty (written since the last cleaning) "
        "before the cleaner takes it.",
        COMPACTION,
        attr="min_cleanable_dirty_ratio",
        topic="min.cleanable.dirty.ratio",
    ),
)
