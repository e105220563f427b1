"""Rows per second of the Spark connector (``format("hmb")``): batch read and streaming read.

``python -m bench.spark_read --records 1000000`` starts a fresh broker,
produces N records of ``--size`` bytes over ``--partitions`` partitions with
hmb_client's Producer, then times, in a local[2] SparkSession:

* a batch read (``spark.read``) that touches every value
  (``sum(length(value))``), twice: the first run includes starting the
  Python workers;
* a streaming read (``readStream``, ``trigger(availableNow=True)``,
  ``maxOffsetsPerTrigger``) into Spark's ``noop`` sink;
* for scale, hmb_client's Consumer alone reading one partition in this
  process (what one Spark task does, without Spark).

Results go to stdout as a table and, with ``--json``, as JSON.  Profile a
run with ``py-spy record --subprocesses -o prof.txt -f raw -- python -m
bench.spark_read ...`` (the Python workers are the JVM's children).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.hmb_process import BrokerProcess
from hmb_client.admin import Admin
from hmb_client.consumer import Consumer
from hmb_client.producer import Producer
from hmb_client.structs import TopicPartition

TOPIC = "spark-bench"


def produce(bootstrap: str, records: int, size: int, partitions: int) -> float:
    """Fill the topic round-robin; returns records/s of the producer (for the record)."""
    with Admin(bootstrap) as admin:
        admin.create_topic(TOPIC, partitions)
    value = b"x" * size
    start = time.perf_counter()
    with Producer(bootstrap, batch_size=65_536, linger_ms=5, partitioner="round_robin") as producer:
        for _ in range(records):
            producer.send(TOPIC, value)
        producer.flush()
    return records / (time.perf_counter() - start)


def consumer_alone(bootstrap: str, partition: int, expected: int) -> float:
    """records/s of one Consumer draining one partition (a Spark task's work, without Spark)."""
    tp = TopicPartition(TOPIC, partition)
    with Consumer(bootstrap, max_partition_fetch_bytes=4 * 1_048_576, enable_auto_commit=False) as c:
        c.assign([tp])
        c.seek(tp, 0)
        got = 0
        start = time.perf_counter()
        while got < expected:
            got += len(c.poll(5.0, max_records=10_000))
        return got / (time.perf_counter() - start)


def session(cores: int) -> Any:
    from pyspark.sql import SparkSession

    from hmb_client.spark import register

    spark = (
        SparkSession.builder.master(f"local[{cores}]")
        .appName("hmb-spark-bench")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.memory", "2g")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    return spark


def batch_read(spark: Any, bootstrap: str, records: int, split: int | None) -> float:
    r = spark.read.format("hmb").option("kafka.bootstrap.servers", bootstrap).option("subscribe", TOPIC)
    if split:
        r = r.option("maxRecordsPerPartition", str(split))
    start = time.perf_counter()
    row = r.load().selectExpr("count(*) AS n", "sum(length(value)) AS bytes").collect()[0]
    elapsed = time.perf_counter() - start
    assert row.n == records, (row.n, records)
    return records / elapsed


def stream_read(
    spark: Any, bootstrap: str, records: int, per_trigger: int, checkpoint: Path
) -> dict[str, float]:
    df = (
        spark.readStream.format("hmb")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", TOPIC)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", str(per_trigger))
        .load()
        .selectExpr("length(value) AS n")
    )
    start = time.perf_counter()
    query = (
        df.writeStream.format("noop")
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    elapsed = time.perf_counter() - start
    progress = query.recentProgress
    rows = sum(p["numInputRows"] for p in progress)
    assert rows == records, (rows, records)
    busy = [p for p in progress if p["numInputRows"]]
    phases: dict[str, float] = {}  # where a micro-batch's time goes (Spark's durationMs), summed
    for p in busy:
        for phase, ms in p["durationMs"].items():
            phases[phase] = phases.get(phase, 0) + ms
    rates = sorted(p["processedRowsPerSecond"] for p in busy)
    return {
        "rows_per_s": rows / elapsed,
        "seconds": elapsed,
        "micro_batches": float(len(busy)),
        "median_batch_rows_per_s": rates[len(rates) // 2] if rates else 0.0,
        "phases_ms": phases,
    }


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    system = f"Python {platform.python_version()}, {platform.system()} {platform.release()}"
    return f"{os.cpu_count()} vCPU {cpu}, {mem:.0f} GiB, {system}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--size", type=int, default=100, help="value bytes per record")
    ap.add_argument("--partitions", type=int, default=4)
    ap.add_argument("--cores", type=int, default=2, help="local[N]")
    ap.add_argument("--split", type=int, default=None, help="maxRecordsPerPartition for the batch read")
    ap.add_argument("--per-trigger", type=int, default=250_000, help="maxOffsetsPerTrigger for streaming")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    result: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": machine(),
    }
    result.update(records=args.records, size=args.size, partitions=args.partitions, cores=args.cores)
    with (
        tempfile.TemporaryDirectory(prefix="hmb-spark-bench-") as tmp,
        BrokerProcess(Path(tmp) / "data") as b,
    ):
        result["produce_rows_per_s"] = produce(b.bootstrap, args.records, args.size, args.partitions)
        per_partition = args.records // args.partitions
        result["consumer_alone_rows_per_s"] = consumer_alone(b.bootstrap, 0, per_partition)
        spark = session(args.cores)
        try:
            result["batch_first_rows_per_s"] = batch_read(spark, b.bootstrap, args.records, args.split)
            result["batch_rows_per_s"] = batch_read(spark, b.bootstrap, args.records, args.split)
            result["stream"] = stream_read(
                spark, b.bootstrap, args.records, args.per_trigger, Path(tmp) / "ckpt"
            )
        finally:
            spark.stop()
    print(f"{result['date']}  {result['machine']}")
    print(f"{args.records:,} records of {args.size} bytes, {args.partitions} partitions, local[{args.cores}]")
    print(f"  produce (hmb_client Producer)      {result['produce_rows_per_s']:>12,.0f} rows/s")
    print(f"  one Consumer, one partition        {result['consumer_alone_rows_per_s']:>12,.0f} rows/s")
    print(f"  batch read, first (worker start)   {result['batch_first_rows_per_s']:>12,.0f} rows/s")
    print(f"  batch read                         {result['batch_rows_per_s']:>12,.0f} rows/s")
    s = result["stream"]
    print(
        f"  streaming read (availableNow)      {s['rows_per_s']:>12,.0f} rows/s "
        f"({s['micro_batches']:.0f} micro-batches, median {s['median_batch_rows_per_s']:,.0f} rows/s each)"
    )
    print(
        "  micro-batch time by phase (ms, summed): "
        + ", ".join(f"{k} {v:,.0f}" for k, v in s["phases_ms"].items())
    )
    if args.json:
        print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
