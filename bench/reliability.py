"""Delivery under faults: TRAK's and rAck's measurements, against hmb.

One *run*: a producer (hmb_client or librdkafka, in its own process) sends
N messages, each carrying a unique sequence number, with one delivery
semantics; a fault is applied for the whole run or for a window; then the
fault is lifted and librdkafka reads the partition from the earliest
offset.  Reported, as TRAK defines them: N sent, M received, M' distinct
received, loss rate alpha = (N - M')/N, duplicate rate beta = (M - M')/N, the
number of distinct ids received more than once; and what neither paper
could check: messages that were *acknowledged* and are missing
(``lost_acked``, must be 0 for acks ≥ 1), producer throughput, execution
time and acknowledgement latency p50/p95/p99.

The exactly-once row (``exactly-once``) is a transactional producer
committing every 500 messages (:mod:`bench.transactional`), read back
with read_committed as every row is: alpha and beta are then the guarantee's own
figures, and its throughput is comparable with the idempotent row's.

Faults (:class:`Fault`): ``loss`` (percent, nftables in a namespace,
needs root), ``delay`` (ms), ``stall`` (seconds of silence), ``reset``
(probability per forwarded chunk) through :mod:`bench.faultproxy`, and
``kill`` (the broker is killed with SIGKILL and restarted after ``value``
seconds).  A window is ``(start_s, end_s)`` after the producer starts;
runs that use one are paced (``rate``) so they last long enough.

A run with ``cluster`` set runs on ZooKeeper and that many brokers, a topic
of 3 partitions at RF=3 (:mod:`bench.reliability_cluster`, which also adds
``partition``: the leader cut off the network); its outcome adds the leader
changes and the producer's retries seen.
"""

from __future__ import annotations

import contextlib
import struct
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench import netns
from bench.faultproxy import FaultProxy, Faults
from bench.hmb_process import BrokerProcess, free_port
from bench.studies import Driver, create_topic, machine_info


class RowSkippedError(Exception):
    """A row this build cannot run (e.g. exactly-once on a cluster without transactions there);
    the message says why, and the matrix runner records it and leaves the row out."""


@dataclass(frozen=True)
class Semantics:
    name: str
    acks: int
    idempotent: bool = False
    #: messages per transaction of a transactional producer, read back read_committed (0: none)
    transaction_records: int = 0


SEMANTICS = {
    s.name: s
    for s in (
        Semantics("at-most-once", 0),
        Semantics("at-least-once-acks1", 1),
        Semantics("at-least-once-acksall", -1),
        Semantics("idempotent", -1, True),
        Semantics("exactly-once", -1, True, transaction_records=500),
    )
}


#: rAck, the thesis's fourth level (acks = -2 and a monitor resending what has no receipt):
#: a row of the rAck study only, and only for hmb_client (librdkafka refuses acks below -1)
RACK = Semantics("rack", -2)


@dataclass(frozen=True)
class Fault:
    kind: str = "none"  # none, loss, delay, stall, reset, kill, partition (a cluster's leader cut off)
    value: float = 0.0  # percent, ms, seconds, probability, seconds down
    window: tuple[float, float] | None = None  # (start, end) seconds after the producer starts

    @property
    def label(self) -> str:
        units = {"loss": "%", "delay": " ms", "stall": " s", "reset": "", "kill": " s down"}
        unit = (units | {"partition": " s cut"}).get(self.kind, "")
        when = f" in {self.window[0]:g}-{self.window[1]:g} s" if self.window else ""
        return "none" if self.kind == "none" else f"{self.kind} {self.value:g}{unit}{when}"


@dataclass(frozen=True)
class Run:
    study: str
    client: str  # "hmb" or "librdkafka"
    semantics: Semantics
    fault: Fault
    records: int
    message_size: int = 100
    rate: float = 0.0  # messages/s; 0: as fast as possible
    repetition: int = 0
    cluster: int = 0  # brokers of a cluster (bench.reliability_cluster); 0: one broker alone


@dataclass
class Outcome:
    study: str
    client: str
    semantics: str
    acks: int
    idempotent: bool
    fault: str
    fault_kind: str
    fault_value: float
    windowed: bool
    message_size: int
    repetition: int
    n: int
    acked: int
    failed: int
    m: int
    m_distinct: int
    loss_rate: float
    dup_rate: float
    dup_ids: int
    lost_acked: int
    throughput_msg_s: float
    elapsed_s: float
    ack_p50_ms: float | None
    ack_p95_ms: float | None
    ack_p99_ms: float | None
    machine: str = field(default_factory=machine_info)
    run_at: str = field(default_factory=lambda: time.strftime("%Y-%m-%dT%H:%M:%S%z"))
    cluster: int = 0  # brokers; 0: one broker alone
    partitions: int = 1
    min_isr: int = 1
    leader_changes: int = 0  # the partitions' leader-epoch increases during the run
    retries: int | None = None  # the producer's retries (librdkafka) or rAck's resends; None: unknown


_SEQ = struct.Struct(">q")


def read_back(
    bootstrap: str, topic: str, timeout: float = 120, settle_s: float = 2.0, partitions: int = 1
) -> list[int]:
    """Every sequence number in the topic's partitions, in offset order within each
    (librdkafka, from offset 0).

    The end is the high watermark once it has stopped moving for ``settle_s``:
    when an acks=0 producer exits, what it wrote is still on its way (in the
    fault proxy's delay queue, or in the kernel's send buffer retransmitting
    through a lossy link) and arrives after the producer is gone.  Reading
    up to the watermark of that moment counted such messages as lost (the
    first TRAK run: exactly 50 % "lost" at 100 and 300 ms delay).
    """
    import confluent_kafka as ck

    c = ck.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "reliability-check",
            "enable.auto.commit": False,
            "isolation.level": "read_committed",  # librdkafka's default, said: the exactly-once row needs it
            "enable.partition.eof": True,
            "log_level": 0,
        }
    )
    try:
        tps = [ck.TopicPartition(topic, p) for p in range(partitions)]

        def watermarks() -> list[int]:
            """The partitions' high watermarks; asked again while a leader is unknown
            (on a cluster, just after a leader's fault, for a ZooKeeper session or so)."""
            give_up = time.monotonic() + timeout / 2
            while True:
                try:
                    return [c.get_watermark_offsets(tp, timeout=30)[1] for tp in tps]
                except ck.KafkaException:
                    if time.monotonic() > give_up:
                        raise
                    time.sleep(0.5)  # a bounded wait for the metadata to name a leader

        high = watermarks()
        stable_since = time.monotonic()
        settle_deadline = stable_since + timeout / 2
        while time.monotonic() - stable_since < settle_s and time.monotonic() < settle_deadline:
            time.sleep(0.25)  # polling the watermarks, a bounded wait on "they stopped moving"
            now = watermarks()
            if now != high:
                high, stable_since = now, time.monotonic()
        c.assign([ck.TopicPartition(topic, p, 0) for p in range(partitions)])
        seqs: list[int] = []
        last = [-1] * partitions
        deadline = time.monotonic() + timeout
        while any(last[p] < high[p] - 1 for p in range(partitions)):
            if time.monotonic() > deadline:
                raise RuntimeError(f"read back stopped at offsets {last} of {high}")
            for msg in c.consume(10000, 0.5):
                error, p = msg.error(), msg.partition() or 0
                if error is None:
                    value = msg.value() or b""
                    if len(value) >= _SEQ.size:
                        seqs.append(_SEQ.unpack_from(value)[0])
                    last[p] = msg.offset() or 0
                elif error.code() == ck.KafkaError._PARTITION_EOF and (msg.offset() or 0) >= high[p]:
                    last[p] = high[p] - 1  # the end: transaction markers take the last offsets
        return seqs
    finally:
        c.close()


@contextlib.contextmanager
def _path(
    run: Run, data_dir: Path
) -> Iterator[tuple[BrokerProcess, FaultProxy | None, netns.LossyLink | None]]:
    """The broker and whatever sits between it and the client for this fault."""
    kind = run.fault.kind
    with contextlib.ExitStack() as stack:
        link = stack.enter_context(netns.LossyLink()) if kind == "loss" else None
        host = link.host_addr if link else "127.0.0.1"
        overrides = ["num.partitions=1"]
        proxy_port = free_port() if kind in ("delay", "stall", "reset") else 0
        if proxy_port:
            overrides.append(f"advertised.listeners=PLAINTEXT://127.0.0.1:{proxy_port}")
        broker = BrokerProcess(data_dir, *overrides, host=host).start()
        stack.callback(broker.kill)
        proxy = None
        if proxy_port:
            proxy = FaultProxy((host, broker.port), seed=run.repetition)
            proxy.start_in_thread(proxy_port)
            stack.callback(proxy.stop)
        yield broker, proxy, link


def _apply(fault: Fault, on: bool, proxy: FaultProxy | None, link: netns.LossyLink | None) -> None:
    if fault.kind == "loss" and link:
        link.set_loss(fault.value if on else 0)
    elif proxy is not None:
        if fault.kind == "delay":
            proxy.set_faults(Faults(delay_ms=fault.value if on else 0))
        elif fault.kind == "stall":
            proxy.set_faults(Faults(stall=on))
        elif fault.kind == "reset":
            proxy.set_faults(Faults(reset_probability=fault.value if on else 0))


def execute(run: Run, delivery_timeout_s: float = 120.0) -> Outcome:
    """One run, start to verdict; every process it starts is stopped on the way out."""
    if run.cluster:
        from bench.reliability_cluster import execute_cluster

        return execute_cluster(run, run.cluster, delivery_timeout_s)
    with (
        tempfile.TemporaryDirectory(prefix="hmb-rel-") as tmp,
        _path(run, Path(tmp) / "data") as (
            broker,
            proxy,
            link,
        ),
    ):
        bootstrap = f"127.0.0.1:{proxy.port}" if proxy else broker.bootstrap
        topic = create_topic(bootstrap)
        fault = run.fault
        stall_window = fault.window or ((0.0, fault.value) if fault.kind == "stall" else None)
        windowed = stall_window is not None or fault.kind == "kill"
        if not windowed:
            _apply(fault, True, proxy, link)
        args = [
            "sequenced",
            *("--client", run.client, "--bootstrap", bootstrap, "--topic", topic),
            *("--records", str(run.records), "--message-size", str(run.message_size)),
            *("--acks", str(run.semantics.acks), "--rate", str(run.rate)),
            *("--delivery-timeout", str(delivery_timeout_s)),
            *(["--idempotent"] if run.semantics.idempotent else []),
            *("--transaction-records", str(run.semantics.transaction_records)),
        ]
        driver = Driver(*args, prefix=link.exec_prefix if link else None)
        try:
            t0 = time.monotonic()
            state = "before"
            while driver.running():
                t = time.monotonic() - t0
                if fault.kind == "kill" and state == "before" and t >= (fault.window or (1.0, 1.0))[0]:
                    broker.kill()
                    state = "down"
                    down_at = time.monotonic()
                elif fault.kind == "kill" and state == "down" and time.monotonic() - down_at >= fault.value:
                    broker.restart()
                    state = "after"
                elif stall_window and state == "before" and t >= stall_window[0]:
                    _apply(fault, True, proxy, link)
                    state = "during"
                elif stall_window and state == "during" and t >= stall_window[1]:
                    _apply(fault, False, proxy, link)
                    state = "after"
                time.sleep(0.02)  # a schedule tick: faults start and end on time
            if state == "down":
                broker.restart()
            result = driver.finish(delivery_timeout_s + 120)
        finally:
            driver.kill()
        _apply(fault, False, proxy, link)
        seqs = read_back(bootstrap, topic)
    return _outcome(run, result, seqs, windowed)


def _outcome(run: Run, result: dict[str, Any], seqs: list[int], windowed: bool) -> Outcome:
    counts = Counter(seqs)
    n = run.records
    distinct = len(counts)
    failed = set(result.get("failed_seqs", []))
    missing = set(range(n)) - counts.keys()
    # rAck acknowledges nothing, but its flush() promises every record: one missing is lost
    lost_acked = len(missing - failed) if run.semantics.acks != 0 else 0
    elapsed = float(result["elapsed_s"])
    return Outcome(
        study=run.study,
        client=run.client,
        semantics=run.semantics.name,
        acks=run.semantics.acks,
        idempotent=run.semantics.idempotent,
        fault=run.fault.label,
        fault_kind=run.fault.kind,
        fault_value=run.fault.value,
        windowed=windowed,
        message_size=run.message_size,
        repetition=run.repetition,
        n=n,
        acked=int(result["acked"]),
        failed=len(failed),
        m=len(seqs),
        m_distinct=distinct,
        loss_rate=(n - distinct) / n,
        dup_rate=(len(seqs) - distinct) / n,
        dup_ids=sum(1 for c in counts.values() if c > 1),
        lost_acked=lost_acked,
        throughput_msg_s=int(result["acked"]) / elapsed if elapsed else 0.0,
        elapsed_s=elapsed,
        ack_p50_ms=result.get("ack_p50_ms"),
        ack_p95_ms=result.get("ack_p95_ms"),
        ack_p99_ms=result.get("ack_p99_ms"),
    )


# ---------------------------------------------------------------- the matrices


def trak(records: int, repetitions: int, clients: tuple[str, ...]) -> list[Run]:
    """TRAK: loss 1-10 % or delay 1-300 ms for the whole run, 100 and 500 B messages."""
    faults = [Fault("loss", p) for p in (1, 2, 5, 10)] + [Fault("delay", d) for d in (1, 50, 100, 300)]
    return [
        Run("trak", c, s, f, records, size, repetition=r)
        for r in range(repetitions)
        for size in (100, 500)
        for f in faults
        for s in SEMANTICS.values()
        for c in clients
    ]


def rack(records: int, repetitions: int, clients: tuple[str, ...], rate: float) -> list[Run]:
    """rAck: 500 B; loss 0/3/6/9 % for the whole run; delay 0/100/200/300 ms for a
    window in the middle third of the run (paced at ``rate`` to make the run last)."""
    span = records / rate
    window = (span / 3, 2 * span / 3)
    faults = [Fault("loss", p) if p else Fault() for p in (0, 3, 6, 9)]
    faults += [Fault("delay", d, window) for d in (100, 200, 300)]
    return [
        Run("rack", c, s, f, records, 500, rate if f.window else 0.0, repetition=r)
        for r in range(repetitions)
        for f in faults
        for s in (*SEMANTICS.values(), RACK)
        for c in clients
        if s is not RACK or c == "hmb"
    ]


def extra(records: int, repetitions: int, clients: tuple[str, ...], rate: float) -> list[Run]:
    """What TRAK and rAck never measured: stalls, resets, and a broker crash mid-run."""
    span = records / rate
    faults = [
        Fault("stall", 2.0, (span / 3, span / 3 + 2.0)),
        Fault("reset", 0.01),
        Fault("kill", 1.0, (span / 3, span / 3)),
    ]
    return [
        Run("faults", c, s, f, records, 100, rate if f.kind != "reset" else 0.0, repetition=r)
        for r in range(repetitions)
        for f in faults
        for s in SEMANTICS.values()
        for c in clients
    ]


def quick(records: int, clients: tuple[str, ...]) -> list[Run]:
    """The suite's short version: every fault once, with the semantics where it
    tells most (loss needs root and is left out when it cannot run)."""
    rate = records / 3.0  # three-second runs, so windows fall mid-run
    runs = [Run("quick", c, s, Fault(), records) for c in clients for s in SEMANTICS.values()]
    for c in clients:
        for s in ("at-least-once-acks1", "idempotent", "exactly-once"):
            runs += [
                Run("quick", c, SEMANTICS[s], Fault("reset", 0.05), records),
                Run("quick", c, SEMANTICS[s], Fault("kill", 0.5, (1.0, 1.0)), records, rate=rate),
            ]
            if netns.unavailable() is None:
                runs.append(Run("quick", c, SEMANTICS[s], Fault("loss", 5), records))
        runs += [
            Run("quick", c, SEMANTICS["idempotent"], Fault("delay", 100, (1.0, 2.0)), records, rate=rate),
            Run("quick", c, SEMANTICS["idempotent"], Fault("stall", 1.0, (1.0, 2.0)), records, rate=rate),
        ]
    return runs


PUBLISHED = {
    # (study, semantics, fault kind, value) -> what the paper reported, for the table
    ("trak", "at-most-once", "loss", 10): "TRAK: loss 0.283 %",
    ("trak", "at-least-once-acks1", "loss", 10): "TRAK: loss 0.0038 %, dup ~0.3 %",
    ("trak", "at-least-once-acksall", "loss", 10): "TRAK: loss 0.0038 %, dup ~0.3 %",
    ("trak", "at-least-once-acks1", "loss", 5): "TRAK: dup ~0.3 % (above 2 % loss)",
    ("rack", "at-most-once", "loss", 6): "rAck: loss 0.038 %",
    ("rack", "at-most-once", "loss", 9): "rAck: loss 0.206 %, 1253 msg/s",
    ("rack", "at-most-once", "none", 0): "rAck: 7294 msg/s",
    ("rack", "at-least-once-acks1", "delay", 300): "rAck: no loss, 1-4 duplicates per run",
    ("rack", "at-least-once-acksall", "delay", 300): "rAck: no loss, 1-4 duplicates per run",
    # the thesis's own level, its Tables 4.1 and 4.4 (acks=0 and acks=-1 of the same runs beside it)
    ("rack", "rack", "none", 0): "rAck: no loss, 213 msg/s (acks=0 7294, acks=-1 745)",
    ("rack", "rack", "loss", 3): "rAck: no loss, 191 msg/s (acks=0 4528, acks=-1 24)",
    ("rack", "rack", "loss", 6): "rAck: no loss, 180 msg/s (acks=0 2422, acks=-1 12)",
    ("rack", "rack", "loss", 9): "rAck: no loss, 181 msg/s (acks=0 1253, acks=-1 7)",
    ("rack", "rack", "delay", 300): "rAck: no loss, 212 msg/s (acks=0 4613, acks=-1 739)",
}


def outcome_row(o: Outcome) -> dict[str, Any]:
    row = asdict(o)
    row["published"] = PUBLISHED.get((o.study, o.semantics, o.fault_kind, int(o.fault_value)), "")
    return row
