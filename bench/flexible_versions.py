"""Flexible against non-flexible Produce and Fetch through hmb's own handlers, in the same run.

    python -m bench.flexible_versions            # about a minute on 2 cores
    python -m bench.flexible_versions --quick    # a few seconds

What: one broker (``hmb.broker.Broker`` over a temporary log, no socket:
the dispatcher is called as the network layer calls it) serves the same
work at several versions, interleaved in rounds so that a drift of the
machine touches every version alike:

* Produce of one 16 KiB RecordBatch (100 records of 100-byte values) to one
  partition, acks=1: v8 (the last classic layout), v9 (the first flexible
  one), v11 (what librdkafka and Kafka 3.x send), v12 and v13 (topic ids;
  decoded and answered by the grammar, past the struct fast path);
* Fetch of one partition's first 16 KiB from the start of the log: v11 (the
  last classic layout), v12 (flexible), v13 (topic ids), v18.

Each figure is the median time per request (decode, handler, encode; the
fetched file regions read as sendfile would send them) and its ratio to the
classic version of the same request.  The issue's target: flexible within
10% of non-flexible (ratio at most 1.10).  Nothing is asserted: the ratios
are printed, and written as Markdown with ``--out``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import trio

import kproto
from hmb.api.context import RawResponse, Session
from hmb.broker import Broker
from hmb.config import BrokerConfig
from kproto import ApiKey
from kproto.records import RecordBatchBuilder

TOPIC = "flex"
PRODUCE_VERSIONS = (8, 9, 11, 12, 13)
FETCH_VERSIONS = (11, 12, 13, 18)
SESSION = Session("127.0.0.1:40000")


def _batch() -> bytes:
    builder = RecordBatchBuilder()
    for i in range(100):
        builder.append(b"key-%04d" % i, os.urandom(100), 1_700_000_000_000)
    return builder.build()


def _produce_frame(version: int, records: bytes, topic_id: bytes) -> bytes:
    topic: dict[str, Any] = {"name": TOPIC, "topic_id": topic_id}
    topic["partition_data"] = [{"index": 0, "records": records}]
    body = {"transactional_id": None, "acks": 1, "timeout_ms": 1000, "topic_data": [topic]}
    return kproto.encode_request(ApiKey.PRODUCE, version, 1, body, client_id="bench")


def _fetch_frame(version: int, topic_id: bytes) -> bytes:
    partition = {
        "partition": 0,
        "current_leader_epoch": -1,
        "fetch_offset": 0,
        "last_fetched_epoch": -1,
        "log_start_offset": -1,
        "partition_max_bytes": 16 << 10,
    }
    body = {
        "replica_id": -1,
        "max_wait_ms": 0,
        "min_bytes": 0,
        "max_bytes": 16 << 10,
        "isolation_level": 0,
        "session_id": 0,
        "session_epoch": -1,
        "topics": [{"topic": TOPIC, "topic_id": topic_id, "partitions": [partition]}],
        "forgotten_topics_data": [],
        "rack_id": "",
    }
    return kproto.encode_request(ApiKey.FETCH, version, 1, body, client_id="bench")


async def _answer(broker: Broker, frame: bytes) -> int:
    outcome = await broker.dispatcher.dispatch(frame, SESSION)
    if isinstance(outcome, RawResponse):
        with outcome.resources:
            return sum(len(p) if isinstance(p, bytes) else len(p.read()) for p in outcome.parts)
    return len(outcome or b"")


async def _rounds(
    broker: Broker, frames: dict[int, bytes], rounds: int, per_round: int
) -> dict[int, list[float]]:
    """µs per request of each version, one sample per round, versions interleaved."""
    samples: dict[int, list[float]] = {v: [] for v in frames}
    for _ in range(rounds):
        for version, frame in frames.items():
            start = time.perf_counter()
            for _ in range(per_round):
                await _answer(broker, frame)
            samples[version].append((time.perf_counter() - start) / per_round * 1e6)
    return samples


def _table(title: str, samples: dict[int, list[float]], base: int, flexible_from: int) -> list[str]:
    base_median = statistics.median(samples[base])
    lines = [
        f"### {title}",
        "",
        f"| version | layout | median µs/request | min µs/request | ratio to v{base} (median) |",
        "| ---: | --- | ---: | ---: | ---: |",
    ]
    for version, values in samples.items():
        layout = "flexible" if version >= flexible_from else "classic"
        median = statistics.median(values)
        lines.append(
            f"| {version} | {layout} | {median:.1f} | {min(values):.1f} | {median / base_median:.3f} |"
        )
    return [*lines, ""]


def measure(rounds: int, per_round: int) -> list[str]:
    with tempfile.TemporaryDirectory(dir="/dev/shm" if os.path.isdir("/dev/shm") else None) as tmp:
        broker = Broker(BrokerConfig(log_dirs=(Path(tmp),)))
        broker.open()
        try:
            broker.logs.create_topic(TOPIC, 1, {})
            topic_id = broker.logs.topic_ids[TOPIC]
            records = _batch()
            produce = {v: _produce_frame(v, records, topic_id) for v in PRODUCE_VERSIONS}
            fetch = {v: _fetch_frame(v, topic_id) for v in FETCH_VERSIONS}
            run: Callable[..., Any] = trio.run
            run(_rounds, broker, produce, 1, 20)  # warm up, and data to fetch
            produced = run(_rounds, broker, produce, rounds, per_round)
            fetched = run(_rounds, broker, fetch, rounds, per_round)
        finally:
            broker.close()
    return [
        *_table(f"Produce, one 16 KiB batch ({rounds} rounds of {per_round})", produced, 8, 9),
        *_table(f"Fetch, 16 KiB of one partition ({rounds} rounds of {per_round})", fetched, 11, 12),
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="5 rounds of 100 instead of 15 of 300")
    parser.add_argument("--out", type=Path, help="also write the tables to this Markdown file")
    args = parser.parse_args(argv)
    rounds, per_round = (5, 100) if args.quick else (15, 300)
    lines = measure(rounds, per_round)
    print("\n".join(lines))
    if args.out is not None:
        args.out.write_text("\n".join(lines))


if __name__ == "__main__":
    main()
