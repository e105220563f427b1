"""format("hmb") end to end: local Spark against a real broker process (and Tansu).

One SparkSession serves every test (conftest); each test has its own
broker.  Records are produced with hmb_client's Producer to explicit
partitions, so the expected offsets are known exactly.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from hmb_client.admin import Admin
from hmb_client.producer import Producer

Row = tuple[int, int, bytes, bytes]  # partition, offset, key, value


def produce(bootstrap: str, topic: str, first: int, last: int, partitions: int, **send: Any) -> list[Row]:
    """Records ``first..last-1`` round-robin over the partitions; what each will be read back as."""
    with Admin(bootstrap) as admin:
        if topic not in admin.topic_names():
            admin.create_topic(topic, partitions)
        before = {p.partition: p.latest_offset for p in admin.describe_topic(topic).partitions}
    out: list[Row] = []
    with Producer(bootstrap, linger_ms=2) as producer:
        for i in range(first, last):
            p = i % partitions
            key, value = b"k%d" % i, b"v%d" % i
            producer.send(topic, value, key=key, partition=p, **send)
            out.append((p, before[p], key, value))
            before[p] += 1
    return out


def reader(spark: Any, bootstrap: str, **options: str) -> Any:
    r = spark.read.format("hmb").option("kafka.bootstrap.servers", bootstrap)
    for name, value in options.items():
        r = r.option(name, value)
    return r.load()


def rows(df: Any) -> list[Row]:
    return sorted((r.partition, r.offset, bytes(r.key), bytes(r.value)) for r in df.collect())


def test_batch_read_equals_what_was_produced(spark: Any, make_broker: Any) -> None:
    b = make_broker()
    produced = produce(b.bootstrap, "events", 0, 3000, 3, headers=[("source", b"test")])
    df = reader(spark, b.bootstrap, subscribe="events", includeHeaders="true")
    assert df.columns == [
        "key",
        "value",
        "topic",
        "partition",
        "offset",
        "timestamp",
        "timestampType",
        "headers",
    ]
    assert df.rdd.getNumPartitions() == 3  # one input partition per topic-partition
    got = df.collect()
    assert len(got) == 3000
    assert sorted((r.partition, r.offset, bytes(r.key), bytes(r.value)) for r in got) == sorted(produced)
    assert {r.topic for r in got} == {"events"}
    assert all(r.headers == [("source", b"test")] for r in got)
    stamped = [r for r in got if r.timestamp is not None]  # magic 0 has no timestamp (type -1)
    assert all(r.timestampType == 0 for r in stamped) and all(
        r.timestampType == -1 for r in got if r.timestamp is None
    )


def test_offset_ranges_and_splitting_are_honoured(spark: Any, make_broker: Any) -> None:
    b = make_broker()
    produced = produce(b.bootstrap, "ranges", 0, 600, 2)
    df = reader(
        spark,
        b.bootstrap,
        subscribe="ranges",
        startingOffsets='{"ranges": {"0": 10, "1": -2}}',
        endingOffsets='{"ranges": {"0": 110, "1": 50}}',
        maxRecordsPerPartition="40",
    )
    assert df.rdd.getNumPartitions() == 3 + 2  # 100 records in 40s, 50 in 40s
    expected = [r for r in produced if (r[0] == 0 and 10 <= r[1] < 110) or (r[0] == 1 and r[1] < 50)]
    assert rows(df) == sorted(expected)
    assigned = reader(spark, b.bootstrap, assign='{"ranges": [1]}', endingOffsets='{"ranges": {"1": -1}}')
    assert rows(assigned) == sorted(r for r in produced if r[0] == 1)


def test_streaming_restarted_from_checkpoint_reads_every_message_once(
    spark: Any, make_broker: Any, tmp_path: Path
) -> None:
    b = make_broker()
    produced = produce(b.bootstrap, "stream", 0, 300, 2)
    out, checkpoint = tmp_path / "out", tmp_path / "checkpoint"

    def start(**trigger: Any) -> Any:
        df = (
            spark.readStream.format("hmb")
            .option("kafka.bootstrap.servers", b.bootstrap)
            .option("subscribe", "stream")
            .option("startingOffsets", "earliest")
            .option("maxOffsetsPerTrigger", "200")
            .load()
            .selectExpr("partition", "offset", "key", "value")
        )
        writer = df.writeStream.format("parquet").option("path", str(out))
        return writer.option("checkpointLocation", str(checkpoint)).trigger(**trigger).start()

    more: list[Row] = []
    feeder = threading.Thread(target=lambda: more.extend(produce(b.bootstrap, "stream", 300, 900, 2)))
    query = start(processingTime="0 seconds")
    feeder.start()  # the topic grows while the query runs
    deadline = time.monotonic() + 60
    while sum(p["numInputRows"] for p in query.recentProgress) < 200 and time.monotonic() < deadline:
        time.sleep(0.2)
    query.stop()  # possibly in the middle of a micro-batch
    first_run = sum(p["numInputRows"] for p in query.recentProgress)
    feeder.join()
    assert 0 < first_run < 900

    query = start(availableNow=True)  # continues from the checkpoint
    query.awaitTermination(120)
    assert len(query.recentProgress) >= 2  # maxOffsetsPerTrigger split the backlog
    got = sorted(
        (r.partition, r.offset, bytes(r.key), bytes(r.value)) for r in spark.read.parquet(str(out)).collect()
    )
    assert got == sorted(produced + more)  # each message exactly once


def test_write_then_read_back(spark: Any, make_broker: Any) -> None:
    b = make_broker()
    with Admin(b.bootstrap) as admin:
        admin.create_topic("written", 2)
        admin.create_topic("other", 1)
    df = spark.createDataFrame(
        [(f"k{i}", f"v{i}", i % 2, "written") for i in range(90)]
        + [(f"k{i}", f"v{i}", None, "other") for i in range(10)],
        "key string, value string, partition int, topic string",
    )
    df.write.format("hmb").mode("append").option("kafka.bootstrap.servers", b.bootstrap).save()
    back = reader(spark, b.bootstrap, subscribe="written").selectExpr(
        "CAST(key AS STRING) k", "CAST(value AS STRING) v", "partition"
    )
    assert sorted(tuple(r) for r in back.collect()) == sorted((f"k{i}", f"v{i}", i % 2) for i in range(90))
    assert reader(spark, b.bootstrap, subscribe="other").count() == 10
    with pytest.raises(Exception, match="topic"):  # neither a topic column nor option
        df.drop("topic").write.format("hmb").mode("append").option(
            "kafka.bootstrap.servers", b.bootstrap
        ).save()


def test_against_tansu(spark: Any, tansu: Any) -> None:
    produced = produce(tansu.bootstrap, "tansu-events", 0, 400, 2)
    assert rows(reader(spark, tansu.bootstrap, subscribe="tansu-events")) == sorted(produced)
    with Admin(tansu.bootstrap) as admin:
        admin.create_topic("tansu-copy", 2)
    copy = reader(spark, tansu.bootstrap, subscribe="tansu-events").select("key", "value", "partition")
    copy.write.format("hmb").mode("append").option("kafka.bootstrap.servers", tansu.bootstrap).option(
        "topic", "tansu-copy"
    ).save()
    assert rows(reader(spark, tansu.bootstrap, subscribe="tansu-copy")) == sorted(produced)
