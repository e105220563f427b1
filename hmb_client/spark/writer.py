"""Writing: ``df.write.format("hmb")`` and ``writeStream``, each task with its own Producer.

The columns are those of Spark's Kafka sink: ``value`` (binary or string,
required), ``key`` (binary or string), ``topic`` (string; the ``topic``
option overrides it, as in Spark), ``partition`` (int; otherwise the
producer's partitioner, murmur2 of the key like Kafka's) and ``headers``
(array of struct<key: string, value: binary>).  Other columns are
ignored.  The schema is checked on the driver, before any task runs.

Tasks take Arrow batches (a column at a time is cheaper than a Row per
record) and send every record; delivery is at-least-once, as Spark's
Kafka sink: a task that fails after some records were acknowledged is
retried from its first record.  A task waits for the previous batch's
acknowledgements before sending the next one, which bounds its memory and
surfaces a failed send as a failed task.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import (
    DataSourceArrowWriter,
    DataSourceStreamArrowWriter,
    WriterCommitMessage,
)
from pyspark.sql.types import BinaryType, DataType, IntegerType, StringType, StructType

from hmb_client.producer import FutureRecordMetadata, Producer
from hmb_client.spark.arrow import HEADER
from hmb_client.spark.options import OptionError, SinkOptions

_BYTES = (BinaryType(), StringType())


@dataclass
class Written(WriterCommitMessage):
    """What one task sent (for the driver's commit)."""

    records: int


def check_schema(schema: StructType, opts: SinkOptions) -> None:
    """Fail on the driver, as Spark's Kafka sink does, for a DataFrame it could not write."""
    types: dict[str, DataType] = {f.name: f.dataType for f in schema.fields}

    def need(name: str, allowed: tuple[DataType, ...], what: str) -> None:
        if name in types and types[name] not in allowed:
            raise OptionError(f"column {name!r} must be {what}, not {types[name].simpleString()}")

    if "value" not in types:
        raise OptionError("the DataFrame needs a 'value' column (binary or string)")
    need("value", _BYTES, "binary or string")
    need("key", _BYTES, "binary or string")
    need("topic", (StringType(),), "string")
    need("partition", (IntegerType(),), "int")
    if "headers" in types and getattr(types["headers"], "elementType", None) != HEADER:
        raise OptionError("column 'headers' must be array<struct<key: string, value: binary>>")
    if opts.topic is None and "topic" not in types:
        raise OptionError("no topic: set the option 'topic' or give the DataFrame a 'topic' column")


def _column(batch: pa.RecordBatch, name: str) -> list[Any] | None:
    if name not in batch.schema.names:
        return None
    col = batch.column(name)
    if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
        col = col.cast(pa.binary())
    return col.to_pylist()


def produce(opts: SinkOptions, batches: Iterator[pa.RecordBatch]) -> Written:
    """Send every row of ``batches``; raise the first failed send."""
    sent = 0
    pending: list[FutureRecordMetadata] = []
    with Producer(opts.bootstrap, client_id="hmb-spark-writer", **opts.producer) as producer:
        send = producer.send
        for batch in batches:
            n = batch.num_rows
            if not n:
                continue
            values = _column(batch, "value")
            keys = _column(batch, "key") or [None] * n
            topics = [opts.topic] * n if opts.topic else batch.column("topic").to_pylist()
            partitions = _column(batch, "partition") or [None] * n
            headers = _column(batch, "headers") or [None] * n
            assert values is not None
            futures = []
            for value, key, topic, partition, hdrs in zip(
                values, keys, topics, partitions, headers, strict=True
            ):
                if topic is None:
                    raise OptionError("a row has a null topic and no 'topic' option is set")
                pairs = [(h["key"], h["value"]) for h in hdrs] if hdrs else None
                futures.append(send(topic, value, key=key, headers=pairs, partition=partition))
            for f in pending:  # the previous batch: sent while this one was being queued
                f.get()
            pending = futures
            sent += n
        producer.flush()
        for f in pending:
            f.get()
    return Written(sent)


class BatchWriter(DataSourceArrowWriter):
    """``df.write.format("hmb")`` (mode append; a topic cannot be overwritten)."""

    def __init__(self, opts: SinkOptions) -> None:
        self.opts = opts

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriterCommitMessage:
        return produce(self.opts, iterator)


class StreamWriter(DataSourceStreamArrowWriter):
    """``df.writeStream.format("hmb")``: every micro-batch's rows, at least once."""

    def __init__(self, opts: SinkOptions) -> None:
        self.opts = opts

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriterCommitMessage:
        return produce(self.opts, iterator)

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:  # noqa: N803 - Spark's name
        """Nothing to do: the records were acknowledged by the brokers before the tasks ended."""

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:  # noqa: N803 - Spark's name
        """Nothing can be taken back from a log: what was acknowledged stays (at-least-once)."""
