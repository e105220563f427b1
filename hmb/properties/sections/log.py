"""The "Log and topic defaults" settings: segments, retention, flushing and the record
rules every topic starts from.

How to add one: see :mod:`hmb.properties.table`.
"""

from __future__ import annotations

from pathlib import Path

from hmb.properties.model import (
    DIRECTORIES,
    HOUR_MS,
    INT,
    LIST,
    LONG,
    NEVER,
    STRING,
    WEEK_MS,
    Property,
    Synonym,
)

LOG = "Log and topic defaults"

PROPERTIES: tuple[Property, ...] = (
    Property(
        "log.dirs",
        DIRECTORIES,
        (Path("hmb-data"),),
        "The directories partitions are stored in, in Kafka's layout. The default is "
        "relative to the working directory rather than under /tmp, so data outlives a reboot.",
        LOG,
        attr="log_dirs",
        synonyms=(Synonym("log.dir"),),
        kafka_default="/tmp/kafka-logs",
    ),
    Property(
        "num.recovery.threads.per.data.dir",
        INT,
        1,
        "Worker threads per log dir that read the partitions' files after a clean shutdown, in "
        "the background while the broker already answers. After an unclean one every last "
        "segment is validated before the broker listens, one partition after another.",
        LOG,
        attr="num_recovery_threads_per_data_dir",
        at_least=1,
    ),
    Property(
        "log.retention.check.interval.ms",
        LONG,
        300_000,
        "How often the broker looks for segments past their retention time or size.",
        LOG,
        attr="retention_check_interval_ms",
        unit="ms",
    ),
    Property(
        "log.segment.bytes",
        INT,
        1 << 30,
        "The size at which a partition's active segment is closed and a new one started.",
        LOG,
        attr="segment_bytes",
        topic="segment.bytes",
        at_least=1024,
        unit="bytes",
    ),
    Property(
        "log.roll.ms",
        LONG,
        WEEK_MS,
        "The age at which a segment is closed even when it is not full.",
        LOG,
        attr="segment_ms",
        topic="segment.ms",
        synonyms=(Synonym("log.roll.hours", HOUR_MS),),
        at_least=1,
        unit="ms",
    ),
    Property(
        "log.index.interval.bytes",
        INT,
        4096,
        "How many bytes of records lie between two entries of a segment's offset index.",
        LOG,
        attr="index_interval_bytes",
        topic="index.interval.bytes",
        at_least=0,
        unit="bytes",
    ),
    Property(
        "log.index.size.max.bytes",
        INT,
        10 << 20,
        "The largest offset index, and time index, of a segment; a segment with a full index is closed.",
        LOG,
        attr="index_max_bytes",
        topic="segment.index.bytes",
        at_least=8,
        unit="bytes",
    ),
    Property(
        "log.retention.ms",
        LONG,
        WEEK_MS,
        "How long a closed segment is kept after its last write; -1 keeps it forever.",
        LOG,
        attr="retention_ms",
        topic="retention.ms",
        synonyms=(Synonym("log.retention.minutes", 60_000), Synonym("log.retention.hours", HOUR_MS)),
        negative=-1,
        unit="ms",
    ),
    Property(
        "log.retention.bytes",
        LONG,
        -1,
        "How many bytes a partition keeps before its oldest segments are deleted; -1: no limit.",
        LOG,
        attr="retention_bytes",
        topic="retention.bytes",
        negative=-1,
        unit="bytes",
    ),
    Property(
        "message.max.bytes",
        INT,
        1_048_588,
        "The largest record batch a producer may write.",
        LOG,
        attr="max_message_bytes",
        topic="max.message.bytes",
        at_least=0,
        unit="bytes",
    ),
    Property(
        "log.flush.interval.messages",
        LONG,
        NEVER,
        "How many messages a partition takes before it is fsynced; -1: never. Like Kafka, "
        "the broker leaves writing back to the page cache by default; 1 fsyncs every append.",
        LOG,
        attr="flush_interval_messages",
        topic="flush.messages",
        at_least=1,
        negative=NEVER,
        shown_default="never",
    ),
    Property(
        "log.flush.interval.ms",
        LONG,
        NEVER,
        "How long written messages may stay in the page cache before the partition is "
        "fsynced; -1: no time limit.",
        LOG,
        attr="flush_interval_ms",
        topic="flush.ms",
        negative=NEVER,
        unit="ms",
        shown_default="never",
    ),
    Property(
        "log.cleanup.policy",
        LIST,
        ("delete",),
        "What becomes of old records: `delete` removes whole segments past retention, "
        "`compact` keeps the latest record of each key (the log cleaner); `compact,delete` "
        "does both. A compacted topic refuses records without a key.",
        LOG,
        attr="cleanup_policy",
        topic="cleanup.policy",
        choices=("delete", "compact"),
    ),
    Property(
        "log.message.timestamp.type",
        STRING,
        "CreateTime",
        "Which timestamp a record keeps: the producer's (`CreateTime`) or the broker's when "
        "it appends the record (`LogAppendTime`).",
        LOG,
        attr="message_timestamp_type",
        topic="message.timestamp.type",
        choices=("CreateTime", "LogAppendTime"),
    ),
    Property(
        "log.message.timestamp.before.max.ms",
        LONG,
        NEVER,
        "How far in the past (by the broker's clock) a CreateTime record's timestamp may lie; "
        "a batch holding an older one is refused with INVALID_TIMESTAMP.",
        LOG,
        attr="message_timestamp_before_max_ms",
        topic="message.timestamp.before.max.ms",
        at_least=0,
        unit="ms",
        shown_default="no limit",
    ),
    Property(
        "log.message.timestamp.after.max.ms",
        LONG,
        HOUR_MS,
        "How far in the future (by the broker's clock) a CreateTime record's timestamp may lie; "
        "a batch holding a later one is refused with INVALID_TIMESTAMP.",
        LOG,
        attr="message_timestamp_after_max_ms",
        topic="message.timestamp.after.max.ms",
        at_least=0,
        unit="ms",
    ),
    Property(
        "compression.type",
        STRING,
        "producer",
        "The codec record batches are stored with: `producer` keeps the producer's; "
        "`uncompressed` or a codec makes the broker recompress every batch in another codec.",
        LOG,
        attr="compression_type",
        topic="compression.type",
        choices=("producer", "uncompressed", "gzip", "snappy", "lz4", "zstd"),
    ),
    Property(
        "log.segment.delete.delay.ms",
        LONG,
        60_000,
        "How long Kafka keeps a deleted segment's files so that readers can finish; hmb "
        "removes them at once, since a reader keeps reading through the descriptor it holds.",
        LOG,
        attr="segment_delete_delay_ms",
        topic="file.delete.delay.ms",
        at_least=0,
        unit="ms",
        acted_on=False,
    ),
    Property(
        "min.insync.replicas",
        INT,
        1,
        "How many in-sync replicas a partition needs for an `acks=all` produce: fewer, and it is "
        "refused with NOT_ENOUGH_REPLICAS. A broker alone has its one replica, always in sync.",
        LOG,
        attr="min_insync_replicas",
        topic="min.insync.replicas",
        at_least=1,
    ),
)
