"""The reliability studies' exactly-once producer: numbered messages in transactions.

``python -m bench.driver sequenced --transaction-records K ...`` sends
``--records`` messages, each carrying its sequence number, K per
transaction, with a transactional producer (librdkafka's or hmb_client's).
A message counts as acknowledged when its transaction has committed; its
latency is from its send to that commit.  A transaction that fails
abortably is aborted and its messages sent again in a new one (what an
exactly-once application does); a retriable commit failure is retried; a
fatal one ends the run with the uncommitted messages failed.  The reader
then uses read_committed, so what an aborted transaction wrote is never
counted: alpha and beta are the exactly-once guarantee's own figures.
"""

from __future__ import annotations

import argparse
import struct
import time
from typing import Any

_SEQ = struct.Struct(">q")


class _Librdkafka:
    def __init__(self, args: argparse.Namespace) -> None:
        import confluent_kafka as ck

        self.ck = ck
        self.timeout = args.delivery_timeout
        self.p = ck.Producer(
            {
                "bootstrap.servers": args.bootstrap,
                "transactional.id": f"reliability-{args.topic}",
                "linger.ms": args.linger_ms,
                "batch.size": args.batch_size,
                "transaction.timeout.ms": 60_000,
                "log_level": 0,
            }
        )
        self.p.init_transactions(self.timeout)

    def send(self, topic: str, value: bytes) -> None:
        while True:
            try:
                self.p.produce(topic, value)
                return
            except BufferError:
                self.p.poll(0.005)

    def begin(self) -> None:
        self.p.begin_transaction()

    def commit(self) -> str:
        """ "ok", "abort" (abort done: resend) or raises (fatal)."""
        try:
            self.p.commit_transaction(self.timeout)
            return "ok"
        except self.ck.KafkaException as exc:
            error = exc.args[0]
            if error.retriable():
                return "retry"
            if error.txn_requires_abort():
                self.p.abort_transaction(self.timeout)
                return "abort"
            raise

    def close(self) -> None:
        self.p.flush(10)


class _Hmb:
    def __init__(self, args: argparse.Namespace) -> None:
        from hmb_client.producer import Producer

        self.p = Producer(
            args.bootstrap,
            transactional_id=f"reliability-{args.topic}",
            linger_ms=args.linger_ms,
            batch_size=args.batch_size,
            delivery_timeout_ms=int(args.delivery_timeout * 1000),
        )
        self.why = ""  # why the last commit failed (the run's outcome reports the first)
        self.p.init_transactions()

    def send(self, topic: str, value: bytes) -> None:
        self.p.send(topic, value)

    def begin(self) -> None:
        self.p.begin_transaction()

    def commit(self) -> str:
        from hmb_client.errors import KafkaError
        from hmb_client.producer.transactions import ProducerFencedError

        try:
            self.p.commit_transaction()
            return "ok"
        except ProducerFencedError:
            raise
        except KafkaError as exc:
            self.why = str(exc)
            self.p.abort_transaction()
            return "abort"

    def close(self) -> None:
        self.p.close(10)


def sequenced_transactional(args: argparse.Namespace, counter: Any) -> dict[str, Any]:
    """``bench.driver sequenced`` with transactions: see the module docstring."""
    pad = b"x" * max(0, args.message_size - _SEQ.size)
    t0 = time.monotonic()  # before the producer starts, as the other rows count it
    producer = _Librdkafka(args) if args.client == "librdkafka" else _Hmb(args)
    latencies: list[float] = []
    failed_seqs: list[int] = []
    pending: list[tuple[int, float]] = []

    def commit() -> None:
        while True:
            outcome = producer.commit()
            if outcome == "ok":
                break
            if outcome == "abort":
                why = getattr(producer, "why", "")
                counter.first_error = (
                    counter.first_error or f"a transaction was aborted and sent again {why}".rstrip()
                )
                producer.begin()
                for seq, _sent_at in pending:
                    producer.send(args.topic, _SEQ.pack(seq) + pad)
        done = time.monotonic()
        counter.n += len(pending)
        latencies.extend(done - sent_at for _seq, sent_at in pending)
        pending.clear()

    try:
        producer.begin()
        for seq in range(args.records):
            producer.send(args.topic, _SEQ.pack(seq) + pad)
            pending.append((seq, time.monotonic()))
            if len(pending) >= args.transaction_records:
                commit()
                producer.begin()
            _pace(args, t0, seq)
        if pending:
            commit()
    except Exception as exc:  # a fatal error: what is not committed failed
        counter.first_error = counter.first_error or repr(exc)
        done = counter.n
        failed_seqs = list(range(done, args.records))
        counter.failed += len(failed_seqs)
    finally:
        producer.close()
    return _result(args, counter, t0, latencies, failed_seqs)


def _pace(args: argparse.Namespace, t0: float, seq: int) -> None:
    if args.rate:
        ahead = t0 + seq / args.rate - time.monotonic()
        if ahead > 0:
            time.sleep(ahead)  # pacing to the target rate, not synchronisation


def _result(
    args: argparse.Namespace, counter: Any, t0: float, latencies: list[float], failed: list[int]
) -> dict[str, Any]:
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
        "failed_seqs": failed,
    }
