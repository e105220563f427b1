"""``hmb perf produce|consume``: throughput and latency, like Kafka's
ProducerPerformance / ConsumerPerformance and the HMB thesis's performance
producer (section 10.2.2).

Produce sends ``--num-records`` records (or for ``--duration`` seconds) of
``--record-size`` bytes, one payload of random letters reused, null keys.
Throughput counts acknowledged records; the run's time ends when the last
one is acknowledged.  Latency is send() to the acknowledgement callback,
measured on every k-th record (k <= 32, see :func:`sample_every`): a callback
per record would cost the client more than sending does and so measure
itself.  Acknowledged and failed records are still counted exactly
(:class:`~hmb_client.tools.common.AckTracker`).  MB are 10^6 bytes of
payload (key + value), as in the thesis's tables.

A line per ``--reporting-interval-ms`` (default one second) goes to stdout;
with ``--json`` the output is one JSON object at the end instead, with the
intervals inside.  A progress bar is drawn on stderr when it is a terminal.
"""

from __future__ import annotations

import argparse
import json
import random
import string
import sys
import time
from array import array
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import Any

from hmb_client.tools.common import (
    AckTracker,
    CliError,
    add_connection_options,
    add_producer_options,
    client_security,
    ensure_topic,
    open_admin,
    positive_int,
    producer_settings,
)

TIMEOUT_MS = 30_000
MB = 1_000_000


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a number above 0, got {text}")
    return value


def register(sub: Any) -> None:
    perf = sub.add_parser(
        "perf",
        help="measure produce or consume throughput and latency",
        description="Measure throughput and latency against a broker (like Kafka's *-perf-test.sh tools).",
    )
    kinds = perf.add_subparsers(dest="action", metavar="ACTION", required=True, help="one of:")

    produce = kinds.add_parser(
        "produce",
        help="produce records as fast as allowed and report msg/s, MB/s, latency",
        description=(
            "Produce records and report, per interval and in total, records/s, MB/s (10^6 bytes of "
            "payload) and acknowledgement latency (send() to ack; avg, p50, p95, p99, max), like "
            "Kafka's ProducerPerformance. Latency is sampled on every k-th record (k <= 32) so "
            "measuring does not slow the producer."
        ),
    )
    produce.add_argument("--topic", required=True, help="topic to produce to (created if needed)")
    amount = produce.add_mutually_exclusive_group(required=True)
    amount.add_argument("--num-records", type=positive_int, metavar="N", help="send N records")
    amount.add_argument("--duration", type=positive_float, metavar="S", help="send for S seconds")
    produce.add_argument(
        "--record-size",
        type=positive_int,
        default=100,
        metavar="BYTES",
        help="value size of each record (default 100)",
    )
    produce.add_argument(
        "--throughput",
        type=float,
        default=-1,
        metavar="MSGS_PER_S",
        help="target rate in records/s; -1 = as fast as possible (default -1)",
    )
    _add_report_options(produce)
    add_producer_options(produce, acks=1)
    add_connection_options(produce, timeout_ms=TIMEOUT_MS)
    produce.set_defaults(func=run_perf_produce)

    consume = kinds.add_parser(
        "consume",
        help="consume records as fast as possible and report msg/s, MB/s",
        description=(
            "Read --messages records from the start of every partition of --topic (assigned, no "
            "group) and report, per interval and in total, records/s and MB/s (10^6 bytes of key + "
            "value), like Kafka's ConsumerPerformance."
        ),
    )
    consume.add_argument("--topic", required=True, help="topic to read")
    consume.add_argument("--messages", type=positive_int, required=True, metavar="N", help="read N records")
    consume.add_argument(
        "--fetch-size",
        type=positive_int,
        default=1_048_576,
        metavar="BYTES",
        help="the most bytes fetched per partition per request (default 1048576)",
    )
    consume.add_argument(
        "--timeout-ms",
        type=positive_int,
        default=10_000,
        metavar="MS",
        help="fail when no record arrives for MS (default 10000)",
    )
    _add_report_options(consume)
    add_connection_options(consume, timeout_ms=TIMEOUT_MS)
    consume.set_defaults(func=run_perf_consume)


def _add_report_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("report")
    group.add_argument(
        "--reporting-interval-ms",
        type=positive_int,
        default=1000,
        metavar="MS",
        help="print a line per interval of MS (default 1000)",
    )
    group.add_argument(
        "--json",
        action="store_true",
        help="print only one JSON object at the end (totals, latency percentiles, the intervals)",
    )


# ------------------------------------------------------------------ statistics


def percentile(sorted_values: Any, q: float) -> float:
    """Nearest-rank percentile of an ascending sequence (0 if empty)."""
    if not len(sorted_values):
        return 0.0
    rank = max(1, min(len(sorted_values), int(q / 100 * len(sorted_values) + 0.999999)))
    return float(sorted_values[rank - 1])


def latency_summary(latencies_ms: Any) -> dict[str, float | int]:
    values = sorted(latencies_ms)
    n = len(values)
    return {
        "samples": n,
        "avg": sum(values) / n if n else 0.0,
        "p50": percentile(values, 50),
        "p95": percentile(values, 95),
        "p99": percentile(values, 99),
        "p999": percentile(values, 99.9),
        "max": values[-1] if n else 0.0,
    }


def _record_latency(latencies: array[float], sent_at: float, _metadata: object) -> None:
    """The ack callback of a sampled record (runs in the producer's I/O thread)."""
    latencies.append((time.perf_counter() - sent_at) * 1000)


def sample_every(num_records: int | None) -> int:
    """Latency is sampled on every k-th record: all of them for small runs, 1 in 32 at most."""
    if num_records is None:
        return 32
    return max(1, min(32, num_records // 10_000))


@dataclass
class Interval:
    at_s: float
    records: int
    msgs_per_s: float
    mb_per_s: float
    latency_avg_ms: float | None = None
    latency_max_ms: float | None = None


@dataclass
class Report:
    """Interval bookkeeping shared by both directions (times from ``time.perf_counter``)."""

    interval_s: float
    started: float = 0.0
    intervals: list[Interval] = field(default_factory=list)
    last_at: float = 0.0
    last_count: int = 0
    last_bytes: int = 0
    last_latency: int = 0

    def start(self, now: float) -> None:
        self.started = self.last_at = now

    def due(self, now: float) -> bool:
        return now - self.last_at >= self.interval_s

    def close_interval(self, now: float, count: int, nbytes: int, latencies: Any = None) -> Interval:
        dt = max(now - self.last_at, 1e-9)
        records = count - self.last_count
        iv = Interval(
            round(now - self.started, 3),
            records,
            round(records / dt, 1),
            round((nbytes - self.last_bytes) / dt / MB, 3),
        )
        if latencies is not None:
            window = latencies[self.last_latency :]
            self.last_latency = len(latencies)
            if len(window):
                iv.latency_avg_ms = round(sum(window) / len(window), 3)
                iv.latency_max_ms = round(max(window), 3)
        self.last_at, self.last_count, self.last_bytes = now, count, nbytes
        self.intervals.append(iv)
        return iv


def _interval_line(iv: Interval) -> str:
    line = f"{iv.at_s:7.1f} s  {iv.records:9d} records  {iv.msgs_per_s:12,.1f} msg/s  {iv.mb_per_s:8.2f} MB/s"
    if iv.latency_avg_ms is not None:
        line += f"  latency avg {iv.latency_avg_ms:.1f} ms, max {iv.latency_max_ms:.1f} ms"
    return line


# ------------------------------------------------------------------ produce


def run_perf_produce(ns: argparse.Namespace) -> int:
    from hmb_client.producer import Producer
    from hmb_client.progress import Progress

    with open_admin(ns) as admin:
        ensure_topic(admin, ns.topic, ns.request_timeout_ms / 1000)
    payload = "".join(random.choices(string.ascii_uppercase, k=ns.record_size)).encode()
    producer = Producer(
        ns.bootstrap_server,
        client_id="hmb-perf-producer",
        request_timeout_ms=ns.request_timeout_ms,
        **producer_settings(ns),
        **client_security(ns),
    )
    k = sample_every(ns.num_records)
    latencies = array("d")  # appended by callbacks in the producer's I/O thread
    tracker = AckTracker()
    report = Report(ns.reporting_interval_ms / 1000)
    total = ns.num_records if ns.num_records is not None else ns.duration
    progress = Progress(total, unit="records" if ns.num_records else "", enabled=None)
    out = sys.stderr if ns.json else sys.stdout
    throttled = ns.throughput > 0
    clock = time.perf_counter
    send, topic, track = producer.send, ns.topic, tracker.add
    limit = ns.num_records if ns.num_records is not None else sys.maxsize
    sent = 0
    try:
        started = last_tick = clock()
        report.start(started)
        deadline = started + ns.duration if ns.duration is not None else None
        try:
            while sent < limit:
                if sent % k == 0:
                    t0 = clock()
                    future = send(topic, payload)
                    future.add_callback(partial(_record_latency, latencies, t0))
                else:
                    future = send(topic, payload)
                track(future)
                sent += 1
                if throttled or sent & 255 == 0:
                    now = clock()
                    if deadline is not None and now >= deadline:
                        break
                    if throttled:
                        ahead = started + sent / ns.throughput - now
                        if ahead > 0.001:
                            time.sleep(ahead)  # the target rate, as Kafka's ThroughputThrottler sleeps
                    if sent & 255 == 0 or now - last_tick >= 0.05:
                        last_tick = now
                        _tick(tracker, report, progress, latencies, ns, out, now)
        except KeyboardInterrupt:  # Ctrl-C: stop sending, report what was sent
            pass
        while tracker.in_flight:  # the last acknowledgements, still reporting each interval
            tracker.wait(max(0.001, report.last_at + report.interval_s - clock()))
            _tick(tracker, report, progress, latencies, ns, out, clock())
        producer.flush()
        finished = clock()
    finally:
        progress.close()
        producer.close()
    tracker.drain()
    _tick(tracker, report, progress, latencies, ns, out, finished, final=True)
    elapsed = max(finished - started, 1e-9)
    lat = latency_summary(latencies)
    result = {
        "tool": "hmb perf produce",
        "topic": ns.topic,
        "records": tracker.acked,
        "records_sent": sent,
        "records_failed": tracker.failed,
        "record_size": ns.record_size,
        "elapsed_s": round(elapsed, 3),
        "msgs_per_s": round(tracker.acked / elapsed, 1),
        "mb_per_s": round(tracker.acked * ns.record_size / elapsed / MB, 3),
        "latency_ms": {key: round(v, 3) if isinstance(v, float) else v for key, v in lat.items()},
        "latency_sample_every": k,
        "config": {
            "acks": ns.acks,
            "batch_size": ns.batch_size,
            "linger_ms": ns.linger_ms,
            "compression_type": ns.compression_type,
            "throughput": ns.throughput,
            "bootstrap_server": ns.bootstrap_server,
        },
        "intervals": [asdict(iv) for iv in report.intervals],
    }
    if ns.json:
        print(json.dumps(result))
    else:
        print(
            f"{tracker.acked} records sent, {result['msgs_per_s']:,.1f} msg/s "
            f"({result['mb_per_s']:.2f} MB/s), "
            f"latency avg {lat['avg']:.2f} ms, p50 {lat['p50']:.2f} ms, p95 {lat['p95']:.2f} ms, "
            f"p99 {lat['p99']:.2f} ms, max {lat['max']:.2f} ms ({lat['samples']} samples)"
        )
    if tracker.failed:
        raise CliError(f"{tracker.failed} of {sent} record(s) failed; first error: {tracker.first_error}")
    return 0


def _tick(
    tracker: AckTracker,
    report: Report,
    progress: Any,
    latencies: array[float],
    ns: argparse.Namespace,
    out: Any,
    now: float,
    final: bool = False,
) -> None:
    """Count acknowledgements; close an interval when due (or the last, partial one)."""
    tracker.drain()
    done = tracker.acked + tracker.failed
    if report.due(now) or (final and done > report.last_count):
        iv = report.close_interval(now, done, done * ns.record_size, latencies)
        if not ns.json:
            progress.println(_interval_line(iv), out)
    if not final:
        elapsed = now - report.started
        progress.update(done if ns.num_records is not None else elapsed, f"{_rate(done, elapsed)} msg/s")


def _rate(done: int, elapsed: float) -> str:
    return f"{done / max(elapsed, 1e-9):,.0f}"


# ------------------------------------------------------------------ consume


def run_perf_consume(ns: argparse.Namespace) -> int:
    from hmb_client.consumer import Consumer
    from hmb_client.progress import Progress
    from hmb_client.structs import TopicPartition

    with open_admin(ns) as admin:
        ensure_topic(admin, ns.topic, ns.request_timeout_ms / 1000)
    consumer = Consumer(
        bootstrap_servers=ns.bootstrap_server,
        group_id=None,
        client_id="hmb-perf-consumer",
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        max_partition_fetch_bytes=ns.fetch_size,
        **client_security(ns),
    )
    report = Report(ns.reporting_interval_ms / 1000)
    progress = Progress(ns.messages, unit="records")
    out = sys.stderr if ns.json else sys.stdout
    count = nbytes = 0
    try:
        tps = [TopicPartition(ns.topic, p) for p in sorted(consumer.partitions_for_topic(ns.topic) or ())]
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        started = time.perf_counter()
        report.start(started)
        last_record = started
        try:
            while count < ns.messages:
                records = consumer.poll(timeout=0.2, max_records=ns.messages - count)
                now = time.perf_counter()
                if records:
                    count += len(records)
                    for r in records:
                        nbytes += len(r.key or b"") + len(r.value or b"")
                    last_record = now
                elif now - last_record >= ns.timeout_ms / 1000:
                    break
                if report.due(now):
                    iv = report.close_interval(now, count, nbytes)
                    if not ns.json:
                        progress.println(_interval_line(iv), out)
                progress.update(count, f"{_rate(count, now - started)} msg/s")
        except KeyboardInterrupt:  # Ctrl-C: report what was read
            pass
        finished = time.perf_counter()
        if count > report.last_count:
            iv = report.close_interval(finished, count, nbytes)
            if not ns.json:
                progress.println(_interval_line(iv), out)
        elapsed = max(finished - started, 1e-9)
    finally:
        progress.close()
        consumer.close()
    result = {
        "tool": "hmb perf consume",
        "topic": ns.topic,
        "messages": count,
        "bytes": nbytes,
        "elapsed_s": round(elapsed, 3),
        "msgs_per_s": round(count / elapsed, 1),
        "mb_per_s": round(nbytes / elapsed / MB, 3),
        "config": {"fetch_size": ns.fetch_size, "bootstrap_server": ns.bootstrap_server},
        "intervals": [asdict(iv) for iv in report.intervals],
    }
    if ns.json:
        print(json.dumps(result))
    else:
        print(
            f"{count} records read, {result['msgs_per_s']:,.1f} msg/s ({result['mb_per_s']:.2f} MB/s) "
            f"in {elapsed:.2f} s"
        )
    if count < ns.messages:
        raise CliError(
            f"only {count} of {ns.messages} records read (none arrived for {ns.timeout_ms} ms, "
            "or interrupted)"
        )
    return 0
