"""The client side of one benchmark cell, run in its own process.

    python -m bench.driver produce --client librdkafka --bootstrap 127.0.0.1:9092 --topic t \\
        --message-size 100 --batch-size 16384 --duration 13
    python -m bench.driver consume --client hmb --bootstrap ... --topic t --records 500000
    python -m bench.driver latency --client hmb --bootstrap ... --topic t --rate 2000 --duration 8
    python -m bench.driver sequenced --client hmb --bootstrap ... --topic t --records 100000 --acks -1

A separate process per cell keeps clients from sharing a GIL or leftover
state, and gives the parent one pid whose sockets it samples (see
:mod:`bench.tcp_sampler`).  The driver writes JSON lines to stdout:
``{"t": <monotonic s>, "n": <messages acknowledged or consumed so far>}``
every 100 ms, then one ``{"done": ...}`` line with totals (and latency
samples for ``latency``).  "librdkafka" is confluent-kafka; "hmb" is
hmb_client.  Both produce with ``acks=1``, the given ``batch.size`` and
``linger.ms`` (default 5).
"""

from __future__ import annotations

import argparse
import json
import struct
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

CLIENTS = ("librdkafka", "hmb")


class Counter:
    """A count shared with the reporting thread (ints are atomic enough under the GIL)."""

    def __init__(self) -> None:
        self.n = 0
        self.failed = 0
        self.first_error = ""


_EMIT = threading.Lock()


def _emit(message: dict[str, Any]) -> None:
    """One JSON line to the parent.  Locked, and one write: ``print`` from two threads
    (the reporter, and the main thread's --hold or final line) interleaved two objects
    on one line, which the parent's reader could not parse."""
    line = json.dumps(message) + "\n"
    with _EMIT:
        sys.stdout.write(line)
        sys.stdout.flush()


def _report(counter: Counter, stop: threading.Event) -> None:
    while not stop.wait(0.1):
        _emit({"t": time.monotonic(), "n": counter.n})


def _run_reporting(work: Callable[[Counter], dict[str, Any]]) -> None:
    counter = Counter()
    stop = threading.Event()
    reporter = threading.Thread(target=_report, args=(counter, stop), daemon=True)
    reporter.start()
    try:
        result = work(counter)
    finally:
        stop.set()
        reporter.join()
    _emit({"done": True, "n": counter.n, "failed": counter.failed, **result})


def _librdkafka_producer(args: argparse.Namespace, acks: int = 1) -> Any:
    import confluent_kafka as ck

    return ck.Producer(
        {
            "bootstrap.servers": args.bootstrap,
            "acks": acks,
            "batch.size": args.batch_size,
            "linger.ms": args.linger_ms,
            "log_level": 3,
        }
    )


def _hmb_producer(args: argparse.Namespace) -> Any:
    from hmb_client.producer import Producer

    return Producer(args.bootstrap, acks=1, batch_size=args.batch_size, linger_ms=args.linger_ms)


def produce(args: argparse.Namespace, counter: Counter) -> dict[str, Any]:
    """As fast as possible for ``--duration`` seconds."""
    value = b"x" * args.message_size
    deadline = time.monotonic() + args.duration
    if args.client == "librdkafka":
        p = _librdkafka_producer(args)

        def delivered(err: Any, _msg: Any) -> None:
            if err is None:
                counter.n += 1
            else:
                counter.failed += 1
                counter.first_error = counter.first_error or str(err)

        while time.monotonic() < deadline:
            for _ in range(1000):
                try:
                    p.produce(args.topic, value, on_delivery=delivered)
                except BufferError:
                    p.poll(0.001)
            p.poll(0)
        p.flush(60)
        return {"error": counter.first_error}
    from hmb_client.tools.common import AckTracker

    hp = _hmb_producer(args)
    # Acknowledgements are counted as `hmb perf produce` counts them (per batch, drained
    # every 1000 sends), not with a callback and an errback per record: those cost the
    # producer's two threads several microseconds a record, and halved its rate.
    tracker = AckTracker()
    send, track, topic = hp.send, tracker.add, args.topic
    while time.monotonic() < deadline:
        for _ in range(1000):
            track(send(topic, value))
        tracker.drain()
        counter.n, counter.failed = tracker.acked, tracker.failed
    hp.flush(60)
    tracker.drain()
    counter.n, counter.failed = tracker.acked, tracker.failed
    hp.close()
    error = tracker.first_error
    return {"error": repr(error) if error is not None else None}


def consume(args: argparse.Namespace, counter: Counter) -> dict[str, Any]:
    """Read ``--records`` messages of partition 0 from offset 0 with ``assign()``."""
    deadline = time.monotonic() + args.timeout
    if args.client == "librdkafka":
        import confluent_kafka as ck

        c = ck.Consumer(
            {
                "bootstrap.servers": args.bootstrap,
                "group.id": "bench-consume",
                "enable.auto.commit": False,
                "log_level": 3,
                # With the default (100000) librdkafka stops fetching for
                # fetch.queue.backoff.ms (1 s) whenever that many messages wait in
                # its queue: the figure would measure that pause, not the broker.
                "queued.min.messages": 10_000_000,
            }
        )
        c.assign([ck.TopicPartition(args.topic, 0, 0)])
        while counter.n < args.records and time.monotonic() < deadline:
            counter.n += sum(m.error() is None for m in c.consume(10000, 0.5))
        _hold(args, counter)
        c.close()
        return {}
    from hmb_client.consumer import Consumer
    from hmb_client.structs import TopicPartition

    hc = Consumer(args.bootstrap, enable_auto_commit=False)
    tp = TopicPartition(args.topic, 0)
    hc.assign([tp])
    hc.seek(tp, 0)
    while counter.n < args.records and time.monotonic() < deadline:
        counter.n += len(hc.poll(0.5))
    _hold(args, counter)
    hc.close()
    return {}


def _hold(args: argparse.Namespace, counter: Counter) -> None:
    """With ``--hold``: report the final count, then wait for stdin to close."""
    if args.hold:
        _emit({"t": time.monotonic(), "n": counter.n})
        sys.stdin.read()


_STAMP = struct.Struct(">d")


def latency(args: argparse.Namespace, counter: Counter) -> dict[str, Any]:
    """Produce at ``--rate`` msg/s stamped with the send time; a consumer in this
    process reads them and records receive - send (one clock, so no skew).

    The topic must be new (the runner creates it): the consumer reads from
    offset 0, so every message sent is measured.
    """
    latencies: list[float] = []
    stop = threading.Event()
    ready = threading.Event()

    def consumer_loop() -> None:
        if args.client == "librdkafka":
            import confluent_kafka as ck

            c = ck.Consumer(
                {"bootstrap.servers": args.bootstrap, "group.id": "bench-lat", "fetch.wait.max.ms": 100}
                | {"enable.auto.commit": False, "log_level": 3}
            )
            c.assign([ck.TopicPartition(args.topic, 0, 0)])
            ready.set()
            while not stop.is_set():
                for m in c.consume(1000, 0.1):
                    value = m.value()
                    if m.error() is None and value:
                        latencies.append(time.time() - _STAMP.unpack_from(value)[0])
            c.close()
            return
        from hmb_client.consumer import Consumer
        from hmb_client.structs import TopicPartition

        hc = Consumer(args.bootstrap, enable_auto_commit=False, fetch_max_wait_ms=100)
        tp = TopicPartition(args.topic, 0)
        hc.assign([tp])
        hc.seek(tp, 0)
        ready.set()
        while not stop.is_set():
            recs = hc.poll(0.1)
            now = time.time()
            latencies.extend(now - _STAMP.unpack_from(r.value)[0] for r in recs if r.value)
        hc.close()

    reader = threading.Thread(target=consumer_loop, daemon=True)
    reader.start()
    ready.wait(30)
    pad = b"x" * max(0, args.message_size - _STAMP.size)
    rate = args.rate or 1000.0
    interval = 1.0 / rate
    if args.client == "librdkafka":
        p = _librdkafka_producer(args)

        def send(v: bytes) -> None:
            p.produce(args.topic, v)
            p.poll(0)

        def finish() -> None:
            p.flush(30)
    else:
        hp = _hmb_producer(args)

        def send(v: bytes) -> None:
            hp.send(args.topic, v)

        def finish() -> None:
            hp.flush(30)
            hp.close()

    start = time.monotonic()
    sent = 0
    while (now := time.monotonic()) < start + args.duration:
        due = int((now - start) * rate) + 1
        while sent < due:
            send(_STAMP.pack(time.time()) + pad)
            sent += 1
            counter.n = sent
        time.sleep(min(interval, 0.001))  # pacing to the target rate, not synchronisation
    finish()
    wait_until = time.monotonic() + 10
    while len(latencies) < sent and time.monotonic() < wait_until:
        time.sleep(0.01)  # bounded wait for the consumer to see the last messages
    stop.set()
    reader.join(10)
    return {"sent": sent, "received": len(latencies), "latencies_s": latencies}


_SEQ = struct.Struct(">q")


def sequenced(args: argparse.Namespace, counter: Counter) -> dict[str, Any]:
    """The reliability studies' producer: ``--records`` messages, each carrying its
    sequence number (the value's first 8 bytes), as fast as the client allows;
    reports what was acknowledged and the acknowledgement latencies."""
    if args.transaction_records:
        from bench.transactional import sequenced_transactional

        return sequenced_transactional(args, counter)
    pad = b"x" * max(0, args.message_size - _SEQ.size)
    latencies: list[float] = []
    failed_seqs: list[int] = []
    acks = int(args.acks)
    retries: list[int] = []  # librdkafka's latest txretries total, or rAck's resends
    t0 = time.monotonic()

    def pace(seq: int) -> None:
        """Hold to ``--rate`` msg/s when one is given, so a run lasts long enough
        for a mid-run fault window."""
        if args.rate:
            ahead = t0 + seq / args.rate - time.monotonic()
            if ahead > 0:
                time.sleep(ahead)  # pacing, not synchronisation

    if args.client == "librdkafka":
        import confluent_kafka as ck

        def on_stats(stats: str) -> None:
            retries[:] = [_txretries(stats)]

        conf = {
            "bootstrap.servers": args.bootstrap,
            "acks": acks,
            "linger.ms": args.linger_ms,
            "batch.size": args.batch_size,
            "message.timeout.ms": int(args.delivery_timeout * 1000),
            "enable.idempotence": args.idempotent,
            "log_level": 0,
            # the retries, evidence for explaining duplicates and slow runs
            "statistics.interval.ms": 500,
            "stats_cb": on_stats,
        }
        p = ck.Producer(conf)

        def make_cb(seq: int, sent_at: float) -> Callable[[Any, Any], None]:
            def delivered(err: Any, _msg: Any) -> None:
                if err is None:
                    counter.n += 1
                    latencies.append(time.monotonic() - sent_at)
                else:
                    failed_seqs.append(seq)
                    counter.failed += 1
                    counter.first_error = counter.first_error or str(err)

            return delivered

        for seq in range(args.records):
            while True:
                try:
                    p.produce(args.topic, _SEQ.pack(seq) + pad, on_delivery=make_cb(seq, time.monotonic()))
                    break
                except BufferError:
                    p.poll(0.005)
            if seq % 1000 == 0:
                p.poll(0)
            pace(seq)
        left = p.flush(args.delivery_timeout + 30)
        counter.failed += left
    else:
        from hmb_client.producer import Producer

        extra: dict[str, Any] = {"enable_idempotence": True} if args.idempotent else {}
        if acks == -2 and args.rack_zookeeper:
            extra["rack_zookeeper_connect"] = args.rack_zookeeper  # receipts are znodes there
        hp = Producer(
            args.bootstrap,
            acks=acks,
            linger_ms=args.linger_ms,
            batch_size=args.batch_size,
            delivery_timeout_ms=int(args.delivery_timeout * 1000),
            **extra,
        )

        def on_ack(sent_at: float) -> Callable[[Any], None]:
            def acked(_md: Any) -> None:
                counter.n += 1
                latencies.append(time.monotonic() - sent_at)

            return acked

        def on_fail(seq: int) -> Callable[[BaseException], None]:
            def failed(exc: BaseException) -> None:
                failed_seqs.append(seq)
                counter.failed += 1
                counter.first_error = counter.first_error or repr(exc)

            return failed

        for seq in range(args.records):
            future = hp.send(args.topic, _SEQ.pack(seq) + pad)
            future.add_callback(on_ack(time.monotonic())).add_errback(on_fail(seq))
            pace(seq)
        try:
            hp.flush(args.delivery_timeout + 30)
        finally:
            hp.close(10)
        monitor_stats = getattr(getattr(hp, "monitor", None), "stats", None)
        if monitor_stats is not None:
            retries[:] = [monitor_stats.resent]
    elapsed = time.monotonic() - t0
    latencies.sort()

    def pct(q: float) -> float | None:
        return latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000 if latencies else None

    return {
        "sent": args.records,
        "acked": counter.n,
        "elapsed_s": elapsed,
        "ack_p50_ms": pct(0.5),
        "ack_p95_ms": pct(0.95),
        "ack_p99_ms": pct(0.99),
        "error": counter.first_error,
        "failed_seqs": failed_seqs,
        "retries": retries[0] if retries else None,
    }


def _txretries(stats_json: str) -> int:
    """The total of librdkafka's per-broker ``txretries`` in one statistics report."""
    stats = json.loads(stats_json)
    return sum(int(b.get("txretries", 0)) for b in stats.get("brokers", {}).values())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m bench.driver",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("mode", choices=("produce", "consume", "latency", "sequenced"))
    ap.add_argument("--client", choices=CLIENTS, required=True, help="librdkafka (confluent-kafka) or hmb")
    ap.add_argument("--bootstrap", required=True, help="HOST:PORT of the broker")
    ap.add_argument("--topic", required=True)
    ap.add_argument("--message-size", type=int, default=100, help="bytes per message value")
    ap.add_argument("--batch-size", type=int, default=16384, help="producer batch.size in bytes")
    ap.add_argument("--linger-ms", type=int, default=5, help="producer linger.ms")
    ap.add_argument("--duration", type=float, default=13.0, help="seconds of producing")
    ap.add_argument("--records", type=int, default=0, help="consume: messages to read")
    ap.add_argument(
        "--rate", type=float, default=0.0, help="latency, sequenced: messages per second (0: no limit)"
    )
    ap.add_argument("--timeout", type=float, default=300.0, help="consume: give up after this many seconds")
    ap.add_argument("--acks", default="1", help="sequenced: 0, 1, -1 or -2 (rAck, hmb_client only)")
    ap.add_argument(
        "--hold",
        action="store_true",
        help="consume: keep the connections open until stdin closes (for a last TCP sample)",
    )
    ap.add_argument("--idempotent", action="store_true", help="sequenced: enable the idempotent producer")
    ap.add_argument(
        "--transaction-records",
        type=int,
        default=0,
        help="sequenced: a transactional producer committing every this many messages (0: none)",
    )
    ap.add_argument(
        "--delivery-timeout", type=float, default=120.0, help="sequenced: delivery timeout, seconds"
    )
    ap.add_argument(
        "--rack-zookeeper",
        default="",
        help="sequenced with --acks -2: the cluster's ZooKeeper (HOST:PORT/chroot), where receipts are",
    )
    args = ap.parse_args(argv)
    work = {"produce": produce, "consume": consume, "latency": latency, "sequenced": sequenced}[args.mode]
    _run_reporting(lambda counter: work(args, counter))
    return 0


if __name__ == "__main__":
    sys.exit(main())
