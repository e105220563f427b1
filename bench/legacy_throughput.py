"""Produce and fetch throughput of hmb with librdkafka in Kafka 0.8.2 mode.

    python -m bench.legacy_throughput --messages 2000000 --batch-size 16384

Starts a fresh broker (``python -m hmb serve`` on a free port, data in a
temporary directory), produces ``--messages`` messages of ``--message-size``
bytes with confluent-kafka (``acks=1``, ``batch.size``, ``linger.ms``), then
consumes them all back with ``assign()``, and reports messages/s and MB/s for
both plus the broker's resident memory.  ``--repeat`` runs the whole cycle
several times (fresh broker each time) and reports every run, so noise on a
shared machine is visible rather than averaged away.

MB/s is given twice: payload (message values only) and log bytes (what the
broker stored: values plus MessageSet framing, 26 bytes per message for
magic 0), the latter being the closer match to the thesis's TCP throughput.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from bench.hmb_process import BrokerProcess  # noqa: E402

LEGACY = {"api.version.request": False, "broker.version.fallback": "0.8.2", "log_level": 3}
MAGIC0_OVERHEAD = 26  # offset, size, crc, magic, attributes, key length, value length


@dataclass
class Run:
    messages: int
    message_size: int
    batch_size: int
    produce_s: float
    produce_msgs_per_s: float
    produce_payload_mb_s: float
    produce_log_mb_s: float
    fetch_s: float
    fetch_msgs_per_s: float
    fetch_payload_mb_s: float
    broker_rss_mb: float


def produce(bootstrap: str, topic: str, n: int, size: int, batch: int, linger_ms: int) -> float:
    import confluent_kafka as ck

    p = ck.Producer(
        {
            "bootstrap.servers": bootstrap,
            **LEGACY,
            "acks": 1,
            "batch.size": batch,
            "linger.ms": linger_ms,
            "queue.buffering.max.messages": 1_000_000,
        }
    )
    value = b"x" * size
    failed: list[object] = []

    def on_delivery(err: object, _msg: object) -> None:
        if err is not None:
            failed.append(err)

    start = time.perf_counter()
    for _ in range(n):
        while True:
            try:
                p.produce(topic, value, on_delivery=on_delivery)
                break
            except BufferError:
                p.poll(0.001)
    if p.flush(120):
        raise RuntimeError("produce did not finish within 120 s")
    elapsed = time.perf_counter() - start
    if failed:
        raise RuntimeError(f"{len(failed)} deliveries failed, first: {failed[0]}")
    return elapsed


def fetch(bootstrap: str, topic: str, n: int) -> float:
    import confluent_kafka as ck

    c = ck.Consumer(
        {
            "bootstrap.servers": bootstrap,
            **LEGACY,
            "group.id": "bench",
            "enable.auto.commit": False,
            "fetch.message.max.bytes": 1_048_576,
        }
    )
    c.assign([ck.TopicPartition(topic, 0, 0)])
    got = 0
    start = time.perf_counter()
    deadline = start + 300
    while got < n and time.perf_counter() < deadline:
        got += len(c.consume(100_000, 0.5))
    elapsed = time.perf_counter() - start
    c.close()
    if got < n:
        raise RuntimeError(f"consumed only {got} of {n}")
    return elapsed


def run_once(args: argparse.Namespace) -> Run:
    with tempfile.TemporaryDirectory(prefix="hmb-bench-") as tmp, BrokerProcess(Path(tmp) / "data") as broker:
        n, size = args.messages, args.message_size
        tp = produce(broker.bootstrap, "bench", n, size, args.batch_size, args.linger_ms)
        tf = fetch(broker.bootstrap, "bench", n)
        rss = broker.rss_bytes() / 1e6
        return Run(
            messages=n,
            message_size=size,
            batch_size=args.batch_size,
            produce_s=round(tp, 3),
            produce_msgs_per_s=round(n / tp),
            produce_payload_mb_s=round(n * size / tp / 1e6, 1),
            produce_log_mb_s=round(n * (size + MAGIC0_OVERHEAD) / tp / 1e6, 1),
            fetch_s=round(tf, 3),
            fetch_msgs_per_s=round(n / tf),
            fetch_payload_mb_s=round(n * size / tf / 1e6, 1),
            broker_rss_mb=round(rss, 1),
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m bench.legacy_throughput",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--messages", type=int, default=1_000_000, help="messages per run (default 1,000,000)")
    ap.add_argument("--message-size", type=int, default=100, help="value bytes per message (default 100)")
    ap.add_argument(
        "--batch-size", type=int, default=16384, help="librdkafka batch.size in bytes (default 16384)"
    )
    ap.add_argument("--linger-ms", type=int, default=5, help="librdkafka linger.ms (default 5)")
    ap.add_argument("--repeat", type=int, default=3, help="runs, each with a fresh broker (default 3)")
    ap.add_argument("--json", action="store_true", help="print one JSON object per run instead of a table")
    args = ap.parse_args(argv)
    try:
        import confluent_kafka  # noqa: F401
    except ImportError:
        print("confluent-kafka is needed: pip install -e '.[test]'", file=sys.stderr)
        return 2
    print(
        f"# {platform.processor() or platform.machine()}, Python {platform.python_version()}, "
        f"{time.strftime('%Y-%m-%d %H:%M')}",
        file=sys.stderr,
    )
    for i in range(args.repeat):
        r = run_once(args)
        if args.json:
            print(json.dumps(asdict(r)))
        else:
            print(
                f"run {i + 1}: produce {r.produce_msgs_per_s:>9,} msg/s "
                f"{r.produce_payload_mb_s:6.1f} MB/s payload "
                f"({r.produce_log_mb_s:.1f} MB/s log) | fetch {r.fetch_msgs_per_s:>9,} msg/s "
                f"{r.fetch_payload_mb_s:6.1f} MB/s | broker RSS {r.broker_rss_mb:.0f} MB"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
