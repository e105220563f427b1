"""The ``hmb`` data source: Spark's entry point, handing out readers and writers.

Spark instantiates this class with the query's options (on the driver and
in workers); it only parses them and builds the reader or writer asked
for, so every check of :mod:`hmb_client.spark.options` runs when the
DataFrame is defined.
"""

from __future__ import annotations

from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    DataSourceStreamWriter,
    DataSourceWriter,
)
from pyspark.sql.types import StructType

from hmb_client.spark.arrow import spark_schema
from hmb_client.spark.options import OptionError, SinkOptions, SourceOptions
from hmb_client.spark.reader import BatchReader, StreamReader
from hmb_client.spark.writer import BatchWriter, StreamWriter, check_schema


class HmbDataSource(DataSource):
    """``format("hmb")``: topics of hmb or any Kafka-compatible broker, with Spark's Kafka options."""

    @classmethod
    def name(cls) -> str:
        return "hmb"

    def schema(self) -> StructType:
        include = str(self.options.get("includeHeaders", "false")).strip().lower() == "true"
        return spark_schema(include)

    def reader(self, schema: StructType) -> DataSourceReader:
        return BatchReader(SourceOptions.parse(self.options, streaming=False), schema)

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:  # noqa: N802 - Spark's name
        return StreamReader(SourceOptions.parse(self.options, streaming=True), schema)

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        if overwrite:
            raise OptionError("a topic is a log: it can be appended to, not overwritten (use mode 'append')")
        return BatchWriter(self._sink(schema))

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:  # noqa: N802 - Spark's name
        """``overwrite`` is outputMode("complete"): as Spark's Kafka sink, every micro-batch
        appends the whole result table to the topic (readers keep the latest per key)."""
        return StreamWriter(self._sink(schema))

    def _sink(self, schema: StructType) -> SinkOptions:
        opts = SinkOptions.parse(self.options)
        check_schema(schema, opts)
        return opts
