"""The thesis's studies (section 10.2) as a matrix of cells, run and sampled.

A *study* varies one producer setting (``batch_size`` or ``message_size``)
over the thesis's values; a *cell* is one value in one *scenario*
(producer -> broker).  Every cell runs ``repetitions`` times; within a
repetition the scenarios run in alternating order (reversed on odd
repetitions) so drift of a shared machine hits every scenario alike.

Each measurement starts a fresh broker (hmb with its own data directory,
or Tansu with memory storage; an external ``--kafka-bootstrap`` broker gets
a fresh topic instead), creates a one-partition topic, runs the client in
its own process (:mod:`bench.driver`) and samples, once a second, the
kernel's TCP counters of that process's connections to the broker
(:mod:`bench.tcp_sampler`) and the client's acknowledged-message count.
Every second becomes a row (:class:`Sample`); the first ``warmup``
seconds are marked and left out of the averages.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench import tcp_sampler
from bench.hmb_process import ROOT, BrokerProcess
from bench.tansu import TansuProcess

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Scenario:
    number: int
    producer: str  # client: "librdkafka" or "hmb"
    broker: str  # "reference" (Tansu or --kafka-bootstrap) or "hmb"

    @property
    def name(self) -> str:
        who = {"librdkafka": "Kafka producer", "hmb": "HMB producer"}[self.producer]
        where = {"reference": "Kafka broker", "hmb": "HMB"}[self.broker]
        return f"S{self.number} {who} -> {where}"


#: The thesis's four scenarios, in its numbering.
SCENARIOS = (
    Scenario(1, "librdkafka", "reference"),
    Scenario(2, "librdkafka", "hmb"),
    Scenario(3, "hmb", "reference"),
    Scenario(4, "hmb", "hmb"),
)


@dataclass(frozen=True)
class Study:
    name: str
    variable: str  # "batch_size" or "message_size"
    values: tuple[int, ...]
    fixed: dict[str, int]
    quick_values: tuple[int, ...]


STUDIES = {
    "batch-size": Study(
        "batch-size", "batch_size", (195, 1387, 8192, 16384, 56769), {"message_size": 100}, (1387, 16384)
    ),
    "message-size": Study(
        "message-size", "message_size", (10, 100, 1000, 10000, 100000), {"batch_size": 12800}, (100, 10000)
    ),
}


@dataclass
class Sample:
    """One row of the results: one second of one measurement."""

    study: str
    role: str  # "produce", "consume" or "latency"
    scenario: str
    producer: str  # the client (producer or consumer) under test
    broker: str  # "hmb", "tansu" or "external"
    variable: str
    value: int
    repetition: int
    second: int
    warmup: bool
    bytes: int  # TCP bytes of the client's connections in this second
    messages: int  # messages acknowledged (produce) or consumed in this second
    latency_ms: float | None = None  # "latency" rows: one row per message
    duration_s: float = 1.0  # the sampled interval (consume samples are shorter)
    machine: str = ""
    run_at: str = ""


def machine_info() -> str:
    model = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    mem = ""
    with contextlib.suppress(OSError, IndexError, ValueError):
        kib = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f", {kib / 2**20:.0f} GiB"
    return (
        f"{os.cpu_count()} cpu {model}{mem}, Linux {platform.release()}, Python {platform.python_version()}"
    )


@dataclass
class RunConfig:
    warmup_s: int = 3
    window_s: int = 10
    repetitions: int = 3
    quick: bool = False
    kafka_bootstrap: str | None = None
    consume: bool = True
    consume_records: int = 300_000
    consume_max_bytes: int = 200_000_000
    latency: bool = True
    latency_rate: int = 2000
    latency_s: int = 8
    linger_ms: int = 5
    machine: str = field(default_factory=machine_info)
    run_at: str = field(default_factory=lambda: time.strftime("%Y-%m-%dT%H:%M:%S%z"))

    @property
    def reference(self) -> str:
        return "external" if self.kafka_bootstrap else "tansu"


# ---------------------------------------------------------------- brokers


@contextlib.contextmanager
def broker(kind: str, cfg: RunConfig) -> Iterator[tuple[str, int]]:
    """A fresh broker of ``kind`` ("hmb" or "reference"): yields (host, port)."""
    if kind == "hmb":
        with tempfile.TemporaryDirectory(prefix="hmb-bench-") as tmp, BrokerProcess(Path(tmp) / "data") as b:
            yield "127.0.0.1", b.port
    elif cfg.kafka_bootstrap:
        host, _, port = cfg.kafka_bootstrap.rpartition(":")
        yield host, int(port)
    else:
        with TansuProcess() as t:
            yield "127.0.0.1", t.port


_topic_ids = itertools.count()


def create_topic(bootstrap: str) -> str:
    """A new one-partition topic (CreateTopics through librdkafka's admin client)."""
    from confluent_kafka.admin import AdminClient, NewTopic

    name = f"bench-{os.getpid()}-{next(_topic_ids)}-{time.time_ns() % 10**9}"
    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 3})
    for future in admin.create_topics([NewTopic(name, 1, 1)]).values():
        future.result(30)
    return name


# ---------------------------------------------------------------- one measurement


class Driver:
    """A :mod:`bench.driver` process; its latest count is read by a thread."""

    def __init__(self, *args: str, prefix: list[str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [*(prefix or []), sys.executable, "-m", "bench.driver", *args],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.count = 0
        self.result: dict[str, Any] | None = None
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                msg = json.loads(line)
            except ValueError:  # never let one bad line stop the reading (the pipe would fill)
                log.warning("unreadable line from the benchmark client: %r", line[:200])
                continue
            if msg.get("done"):
                self.result = msg
            self.count = int(msg["n"])

    def release(self) -> None:
        """End a ``--hold`` driver's wait (it exits when its stdin closes)."""
        if self.proc.stdin is not None:
            self.proc.stdin.close()

    def running(self) -> bool:
        return self.proc.poll() is None

    def finish(self, timeout: float) -> dict[str, Any]:
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise RuntimeError(f"benchmark client did not finish within {timeout:.0f}s") from None
        self._reader.join(10)
        if self.proc.returncode or self.result is None:
            err = self.proc.stderr.read() if self.proc.stderr else ""
            raise RuntimeError(f"benchmark client failed ({self.proc.returncode}):\n{err[-3000:]}")
        return self.result

    def finish_clean(self, timeout: float) -> dict[str, Any]:
        """:meth:`finish`, and every message must have been acknowledged."""
        result = self.finish(timeout)
        if result.get("failed"):
            raise RuntimeError(f"{result['failed']} messages failed: {result.get('error')}")
        return result

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def sample_seconds(
    driver: Driver,
    port: int,
    seconds: float,
    counter: str,
    emit: Callable[[int, int, int, float], None],
    stop_early: Callable[[], bool] = lambda: False,
    interval: float = 1.0,
) -> None:
    """Call ``emit(index, bytes, messages, duration_s)`` every ``interval`` seconds
    for ``seconds`` (or until the driver exits or ``stop_early()``; the last,
    partial interval is then emitted with its real duration), from the
    kernel's counters."""
    last = tcp_sampler.sample(driver.proc.pid, port)
    last_n = driver.count
    start = last_t = time.monotonic()
    index = 0
    while index * interval < seconds:
        due = start + (index + 1) * interval
        # Wake at the next tick, or as soon as the work is done: a timer, not synchronisation.
        while time.monotonic() < due and not stop_early():
            time.sleep(min(0.01, max(0.0, due - time.monotonic())))
        if not driver.running():
            break
        now, n, t = tcp_sampler.sample(driver.proc.pid, port), driver.count, time.monotonic()
        emit(index, getattr(now, counter) - getattr(last, counter), n - last_n, t - last_t)
        last, last_n, last_t = now, n, t
        index += 1
        if stop_early():
            break


def measure_produce(
    study: Study, scenario: Scenario, value: int, rep: int, cfg: RunConfig, out: Callable[[Sample], None]
) -> None:
    settings = {**study.fixed, study.variable: value}
    with broker(scenario.broker, cfg) as (host, port):
        bootstrap = f"{host}:{port}"
        topic = create_topic(bootstrap)
        duration = cfg.warmup_s + cfg.window_s
        driver = Driver(
            "produce",
            *("--client", scenario.producer, "--bootstrap", bootstrap, "--topic", topic),
            *("--message-size", str(settings["message_size"]), "--batch-size", str(settings["batch_size"])),
            *("--linger-ms", str(cfg.linger_ms), "--duration", str(duration + 0.5)),
        )
        try:

            def emit(second: int, nbytes: int, messages: int, _duration: float) -> None:
                out(
                    _row(
                        study,
                        "produce",
                        scenario,
                        scenario.producer,
                        value,
                        rep,
                        second,
                        nbytes,
                        messages,
                        cfg,
                    )
                )

            sample_seconds(driver, port, duration, "bytes_acked", emit)
            driver.finish_clean(120)
        finally:
            driver.kill()


def measure_consume(
    study: Study, scenario: Scenario, value: int, rep: int, cfg: RunConfig, out: Callable[[Sample], None]
) -> None:
    """The consumer matrix: ``scenario.producer`` is the consuming client here.

    The topic is filled first by librdkafka with the cell's batch and
    message size (so the stored batches are shaped as in the produce
    study), then read back from offset 0; the first second is warm-up.
    """
    settings = {**study.fixed, study.variable: value}
    size = settings["message_size"]
    records = consume_records(size, cfg)
    with broker(scenario.broker, cfg) as (host, port):
        bootstrap = f"{host}:{port}"
        topic = create_topic(bootstrap)
        fill = subprocess.run(
            [
                sys.executable,
                "-c",
                _FILL,
                bootstrap,
                topic,
                str(records),
                str(size),
                str(settings["batch_size"]),
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=600,
        )
        if fill.returncode:
            raise RuntimeError(f"filling {topic} failed:\n{fill.stderr[-2000:]}")
        driver = Driver(
            "consume",
            *("--client", scenario.producer, "--bootstrap", bootstrap, "--topic", topic),
            *("--records", str(records), "--timeout", "300", "--hold"),
        )
        try:

            def emit(index: int, nbytes: int, messages: int, duration: float) -> None:
                row = _row(
                    study, "consume", scenario, scenario.producer, value, rep, index, nbytes, messages, cfg
                )
                row.warmup = index == 0  # connecting, first fetch
                row.duration_s = duration
                out(row)

            # Quarter-second samples: a fast broker serves a whole topic in a second or two.
            # The driver holds its connections open until told, so the last sample sees them.
            sample_seconds(
                driver, port, 300, "bytes_received", emit, lambda: driver.count >= records, interval=0.25
            )
            driver.release()
            driver.finish_clean(60)
        finally:
            driver.kill()


def consume_records(message_size: int, cfg: RunConfig) -> int:
    """How many records a consume cell fills and reads: ``consume_records``, fewer for
    large messages so that no cell moves more than ``consume_max_bytes``."""
    return min(cfg.consume_records, max(1000, cfg.consume_max_bytes // message_size))


def consume_seconds(message_size: int, cfg: RunConfig) -> float:
    """A consume cell's rough duration, for the ETA: starting a broker and two
    clients, librdkafka filling the topic, then the read (rates measured on the
    2-core machine the results in bench/results come from, the slower clients' where
    they differ)."""
    records = consume_records(message_size, cfg)
    nbytes = records * message_size
    fill = records / 60_000 + nbytes / 30e6
    read = records / 100_000 + nbytes / 50e6
    return 5 + fill + read


_FILL = r"""
import sys
import confluent_kafka as ck
bs, topic, n, size, batch = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
p = ck.Producer({"bootstrap.servers": bs, "acks": 1, "linger.ms": 5, "batch.size": batch, "log_level": 3,
                 "message.max.bytes": max(1000000, size + 1000)})
v = b"x" * size
failed = []
for _ in range(n):
    while True:
        try:
            p.produce(topic, v, on_delivery=lambda err, msg: err and failed.append(err)); break
        except BufferError:
            p.poll(0.01)
assert p.flush(120) == 0 and not failed, failed[:3]
"""


def measure_latency(scenario: Scenario, rep: int, cfg: RunConfig, out: Callable[[Sample], None]) -> None:
    """Produce-to-consume latency at ``latency_rate`` msg/s, 100-byte messages, one client family."""
    with broker(scenario.broker, cfg) as (host, port):
        bootstrap = f"{host}:{port}"
        topic = create_topic(bootstrap)
        driver = Driver(
            "latency",
            *("--client", scenario.producer, "--bootstrap", bootstrap, "--topic", topic),
            *("--rate", str(cfg.latency_rate), "--duration", str(cfg.latency_s), "--message-size", "100"),
        )
        try:
            result = driver.finish_clean(cfg.latency_s + 120)
        finally:
            driver.kill()
    lat = result["latencies_s"]
    if len(lat) < result["sent"]:
        raise RuntimeError(f"latency run received {len(lat)} of {result['sent']} messages")
    for i, seconds in enumerate(lat):
        row = _row(_LATENCY, "latency", scenario, scenario.producer, cfg.latency_rate, rep, 0, 0, 1, cfg)
        row.second = int(i / cfg.latency_rate)
        row.warmup = row.second < 1
        row.latency_ms = seconds * 1000
        out(row)


_LATENCY = Study("latency", "rate", (), {"message_size": 100}, ())


def _row(
    study: Study,
    role: str,
    scenario: Scenario,
    client: str,
    value: int,
    rep: int,
    second: int,
    nbytes: int,
    messages: int,
    cfg: RunConfig,
) -> Sample:
    return Sample(
        study=study.name,
        role=role,
        scenario=scenario.name,
        producer=client,
        broker="hmb" if scenario.broker == "hmb" else cfg.reference,
        variable=study.variable,
        value=value,
        repetition=rep,
        second=second,
        warmup=second < cfg.warmup_s,
        bytes=nbytes,
        messages=messages,
        machine=cfg.machine,
        run_at=cfg.run_at,
    )


# ---------------------------------------------------------------- the matrix


@dataclass(frozen=True)
class Task:
    role: str
    scenario: Scenario
    value: int
    repetition: int
    seconds: float  # rough duration, for the ETA

    @property
    def label(self) -> str:
        return f"{self.role} {self.scenario.name} {self.value} #{self.repetition + 1}"


def plan(study: Study, cfg: RunConfig) -> list[Task]:
    """Every measurement of a study, scenarios alternating per repetition."""
    values = study.quick_values if cfg.quick else study.values
    tasks = []
    for rep in range(cfg.repetitions):
        order = SCENARIOS if rep % 2 == 0 else SCENARIOS[::-1]
        for value in values:
            for sc in order:
                tasks.append(Task("produce", sc, value, rep, cfg.warmup_s + cfg.window_s + 3))
            if cfg.consume:
                size = {**study.fixed, study.variable: value}["message_size"]
                for sc in order:
                    tasks.append(Task("consume", sc, value, rep, consume_seconds(size, cfg)))
        if cfg.latency:
            for sc in order:
                tasks.append(Task("latency", sc, 0, rep, cfg.latency_s + 5))
    return tasks


def run_task(study: Study, task: Task, cfg: RunConfig, out: Callable[[Sample], None]) -> None:
    if task.role == "produce":
        measure_produce(study, task.scenario, task.value, task.repetition, cfg, out)
    elif task.role == "consume":
        measure_consume(study, task.scenario, task.value, task.repetition, cfg, out)
    else:
        measure_latency(task.scenario, task.repetition, cfg, out)


def samples_to_jsonl(path: Path) -> tuple[Callable[[Sample], None], Callable[[], None]]:
    """A row writer appending JSON lines (so an interrupted run keeps what it measured)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    f = path.open("a")

    def write(s: Sample) -> None:
        f.write(json.dumps(asdict(s)) + "\n")

    return write, f.close
