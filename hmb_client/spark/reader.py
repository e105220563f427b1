"""Reading: the batch reader, the streaming reader, and the task that reads one offset range.

Spark calls ``partitions()`` on the driver and ``read()`` in executor
tasks, each on its own unpickled copy of the reader.  So the readers hold
only options (and, on the driver, a metadata consumer that is never
pickled), and every task opens its own :class:`Consumer`, assigns its one
partition, seeks to the range's start and polls until the range's end: no
group, nothing committed, as Spark's Kafka source.

The streaming reader's offsets are Spark's Kafka JSON
(``{"topic": {"0": 42}}``: the next offset to read per partition).  Spark
writes the end offset of each micro-batch to the checkpoint before running
it and hands it back after a restart, and every range is read exactly
from its start to its end, so a restarted query neither skips nor repeats
a record; exactly-once *output* then depends on the sink (a file sink is).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceReader, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)
from pyspark.sql.types import StructType

from hmb_client.consumer import Consumer
from hmb_client.errors import KafkaTimeoutError
from hmb_client.spark.arrow import arrow_schema, record_batch
from hmb_client.spark.options import OptionError, SourceOptions, offsets_from_json, offsets_json
from hmb_client.spark.plan import (
    OffsetRange,
    bounds,
    metadata_consumer,
    rate_limit,
    resolve,
    split,
    topic_partitions,
)
from hmb_client.structs import TopicPartition

# Rows per Arrow batch: Spark's own default (spark.sql.execution.arrow.maxRecordsPerBatch).
BATCH_ROWS = 10_000
# A task reads one partition only: larger fetches than the consumer's 1 MiB default
# halve the round trips, and the task is alone with its memory.
_TASK_CONSUMER = {"max_partition_fetch_bytes": 4 * 1_048_576}


def read_range(opts: SourceOptions, rng: OffsetRange, schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    """The records ``rng.start`` to ``rng.end`` of one partition, as Arrow batches.

    With ``failOnDataLoss`` (the default) records that are gone (retention)
    or a range that cannot be completed within ``kafkaConsumer.pollTimeoutMs``
    fail the task; without it, what can be read is returned.
    """
    tp = TopicPartition(rng.topic, rng.partition)
    settings = {**_TASK_CONSUMER, **opts.consumer}
    reset = "error" if opts.fail_on_data_loss else "earliest"
    timeout = opts.poll_timeout_ms / 1000
    with Consumer(
        opts.bootstrap,
        client_id="hmb-spark-task",
        enable_auto_commit=False,
        auto_offset_reset=reset,
        **settings,
    ) as consumer:
        consumer.assign([tp])
        consumer.seek(tp, rng.start)
        pos = rng.start
        while pos < rng.end:
            records = consumer.poll(timeout, max_records=min(BATCH_ROWS, rng.end - pos))
            if not records:
                pos = consumer.position(tp)
                if pos >= rng.end or not opts.fail_on_data_loss:
                    return
                raise KafkaTimeoutError(
                    f"{rng.topic}-{rng.partition}: no record at offset {pos} within "
                    f"{opts.poll_timeout_ms} ms (range {rng.start}-{rng.end})"
                )
            if records[-1].offset >= rng.end:
                records = [r for r in records if r.offset < rng.end]
                if not records:
                    return
            yield record_batch(records, schema)
            pos = records[-1].offset + 1


class BatchReader(DataSourceReader):
    """``spark.read.format("hmb")``: the offsets are fixed when the query is planned."""

    def __init__(self, opts: SourceOptions, schema: StructType) -> None:
        self.opts = opts
        self.arrow = arrow_schema(schema)

    def partitions(self) -> Sequence[InputPartition]:
        opts = self.opts
        with metadata_consumer(opts) as consumer:
            tps = topic_partitions(consumer, opts)
            earliest, latest = bounds(consumer, tps)
        start = resolve(opts.starting, tps, earliest, latest, name="startingOffsets")
        end = resolve(opts.ending, tps, earliest, latest, name="endingOffsets")
        backwards = [f"{tp.topic}-{tp.partition}" for tp in tps if start[tp] > end[tp]]
        if backwards:
            raise OptionError(f"startingOffsets lies after endingOffsets for {backwards}")
        ranges = [OffsetRange(tp.topic, tp.partition, start[tp], end[tp]) for tp in tps]
        return [InputPartition(r) for r in split(ranges, opts.min_partitions, opts.max_records_per_partition)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return read_range(self.opts, partition.value, self.arrow)


class StreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """``spark.readStream.format("hmb")``: micro-batches of offset ranges, limited by
    ``maxOffsetsPerTrigger``; partitions that appear later are read from their start."""

    def __init__(self, opts: SourceOptions, schema: StructType) -> None:
        self.opts = opts
        self.arrow = arrow_schema(schema)
        self._consumer: Consumer | None = None  # driver only
        self._target: dict[TopicPartition, int] | None = None  # Trigger.AvailableNow's end

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_consumer"] = None  # threads and sockets stay on the driver
        return state

    def _metadata(self) -> Consumer:
        if self._consumer is None:
            self._consumer = metadata_consumer(self.opts)
        return self._consumer

    def _now(self) -> tuple[list[TopicPartition], dict[TopicPartition, int], dict[TopicPartition, int]]:
        consumer = self._metadata()
        tps = topic_partitions(consumer, self.opts)
        earliest, latest = bounds(consumer, tps)
        return tps, earliest, latest

    def initialOffset(self) -> dict:  # noqa: N802 - Spark's name
        tps, earliest, latest = self._now()
        return offsets_json(resolve(self.opts.starting, tps, earliest, latest, name="startingOffsets"))

    def getDefaultReadLimit(self) -> ReadLimit:  # noqa: N802 - Spark's name
        n = self.opts.max_offsets_per_trigger
        return ReadAllAvailable() if n is None else ReadMaxRows(n)

    def prepareForTriggerAvailableNow(self) -> None:  # noqa: N802 - Spark's name
        self._target = self._now()[2]

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:  # noqa: N802 - Spark's name
        begun = offsets_from_json(start)
        tps, earliest, latest = self._now()
        begin = {tp: begun.get(tp, earliest[tp]) for tp in tps}
        if self._target is not None:  # AvailableNow: nothing newer than when the query started
            latest = {tp: min(latest[tp], self._target.get(tp, begin[tp])) for tp in tps}
        if isinstance(limit, ReadMaxRows):
            latest = rate_limit(begin, latest, limit.max_rows)
        # Never backwards (a partition whose log was cut keeps its place), nothing forgotten.
        end = {**begun, **{tp: max(latest[tp], begin[tp]) for tp in tps}}
        return offsets_json(end)

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        begun, ended = offsets_from_json(start), offsets_from_json(end)
        new = [tp for tp in ended if tp not in begun]
        if new:  # appeared in this micro-batch: from their beginning, as Spark's Kafka source
            begun.update(self._metadata().beginning_offsets(new))
        ranges = [OffsetRange(tp.topic, tp.partition, begun[tp], off) for tp, off in sorted(ended.items())]
        return [
            InputPartition(r)
            for r in split(ranges, self.opts.min_partitions, self.opts.max_records_per_partition)
        ]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return read_range(self.opts, partition.value, self.arrow)

    def commit(self, end: dict) -> None:
        """Nothing to do: like Spark's Kafka source, progress lives in the checkpoint only."""

    def stop(self) -> None:
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None
