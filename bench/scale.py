"""How cost grows with the size of the work: partitions and connections, hmb against Tansu.

    python -m bench scale           # 1,000/3,000/10,000 partitions, 1,000/10,000 connections
    python -m bench scale --partitions 1000,3000 --connections 1000    # a reduced run

For each broker (hmb and Tansu, started here, the same run), and each size:

* **partitions** — a fresh broker; confluent-kafka's AdminClient creates
  topics of 10 partitions in batches of 50 (as a new user would), after a
  probe of how fast the file system makes a partition's directory and files
  at that moment (hmb's create figure includes it; it varies); one
  librdkafka producer sends one 100-byte record to every partition; one
  consumer, assigned every partition, reads one record from each; then the
  broker's RSS and (hmb) the disk its data dir holds, counted in allocated
  blocks so a sparse preallocated file counts for what it really takes.  hmb
  is then stopped cleanly and started again: the time from the process start
  to its first Metadata answer, beside the same figure for an empty data dir.
* **connections** — raw sockets on loopback, each sending one ApiVersions
  request: the broker's CPU per connection opened, per idle connection and
  second, its RSS per connection; then 1,000 of them produce at once (a
  bounded number of rounds each) while a probe in a process of its own
  (:mod:`bench.scale_probe`: paced connections like a heartbeat or an admin
  call, and one closed-loop connection) measures Metadata latency, p99
  against the same probe on the unloaded broker.  With two CPUs or more,
  while latency is measured, the broker runs on CPUs of its own and the
  load on the others (:class:`bench.scale_probe.Placement`; ``--no-pin`` to
  leave it to the scheduler); the CPU and memory figures are taken with
  every CPU free to the broker, as a user runs it (pinned to one core,
  Tansu's workers spent 40-65 % less CPU per connection opened and
  produced).  One Produce to each partition goes before any measuring, so
  a first use's imports and log opening are not counted as load.

Creation cost is also sampled per batch, so "cost of the last 500
partitions / cost of the first 500" shows whether creating a partition gets
dearer with the number that exist.  Output: a Markdown table and a log-log
plot (``--out``, default ``bench/results/scale-<date>``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import selectors
import shutil
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import asdict, dataclass
from pathlib import Path

import kproto
from bench.hmb_process import ROOT, BrokerProcess
from bench.scale_probe import Placement, Probe, p99_ms, percentile_ms
from bench.scale_report import ConnectionRow, PartitionRow, plot, render
from bench.studies import machine_info
from bench.tansu import TansuProcess
from kproto import ApiKey
from kproto.records import Compression, RecordBatchBuilder

PARTITIONS_PER_TOPIC = 10
TOPICS_PER_REQUEST = 50
CONN_TOPIC, CONN_PARTITIONS = "scale-conn", 10  # what the producing connections write to
TICKS = os.sysconf("SC_CLK_TCK")


# ---------------------------------------------------------------- process figures


def cpu_seconds(pid: int) -> float:
    """User + system CPU of ``pid`` so far (its threads included)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def run_queue_wait_s(pid: int) -> float:
    """Seconds the threads of ``pid`` have waited, runnable, for a CPU (the kernel's schedstat)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[1])
        except (OSError, IndexError):
            continue  # a thread that ended meanwhile
    return total / 1e9


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


def allocated_bytes(root: Path) -> int:
    """Disk really taken under ``root``: allocated blocks of every file and directory."""
    total = 0
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            total += os.lstat(os.path.join(dirpath, name)).st_blocks * 512
    return total


def fs_ms_per_dir(base: Path, count: int = 300) -> float:
    """Milliseconds to make a directory holding three empty files under ``base``, as creating a
    partition does, and the files removed again: the file system's share of a create figure.

    On this bench's VM it moved 30x within the hour.  Its ext4 has no
    journal, and such an ext4 reads the inode table block of each free inode
    it comes to, to skip those freed recently, before it hands one out: a
    profile of creating 10,000 partitions right after thousands of files had
    been deleted (the previous size's data dir, a test run) spent 70 % of the
    broker's CPU there, in the kernel.
    """
    probe = Path(tempfile.mkdtemp(prefix="hmb-scale-fs-", dir=base))
    try:
        started = time.perf_counter()
        for i in range(count):
            d = probe / f"t-{i}"
            d.mkdir()
            for name in ("0.log", "0.index", "0.timeindex"):
                os.close(os.open(d / name, os.O_CREAT | os.O_RDWR, 0o644))
        return (time.perf_counter() - started) * 1000 / count
    finally:
        shutil.rmtree(probe)


def raise_nofile() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


# ---------------------------------------------------------------- brokers


@dataclass
class Running:
    kind: str
    bootstrap: str
    pid: int
    data_dir: Path | None
    process: BrokerProcess | None


@contextmanager
def broker(kind: str) -> Iterator[Running]:
    if kind == "tansu":
        with TansuProcess() as t:
            assert t.proc is not None
            yield Running(kind, t.bootstrap, t.proc.pid, None, None)
        return
    with tempfile.TemporaryDirectory(prefix="hmb-scale-") as tmp:
        data = Path(tmp) / "data"
        b = BrokerProcess(data).start(timeout=120)
        try:
            assert b.proc is not None
            yield Running(kind, b.bootstrap, b.proc.pid, data, b)
        finally:
            b.kill()


def first_metadata_s(data_dir: Path) -> tuple[float, BrokerProcess]:
    """Seconds from spawning ``hmb serve`` on ``data_dir`` to its first Metadata answer."""
    b = BrokerProcess(data_dir)
    started = time.monotonic()
    b.start(timeout=600)
    with socket.create_connection(("127.0.0.1", b.port), timeout=600) as s:
        s.sendall(kproto.encode_request(ApiKey.METADATA, 1, 1, {"topics": None}))
        _read_frame(s)
    return time.monotonic() - started, b


def _read_frame(s: socket.socket) -> bytes:
    head = b""
    while len(head) < 4:
        chunk = s.recv(4 - len(head))
        if not chunk:
            raise ConnectionError("closed")
        head += chunk
    (size,) = struct.unpack(">i", head)
    body = bytearray()
    while len(body) < size:
        chunk = s.recv(min(1 << 20, size - len(body)))
        if not chunk:
            raise ConnectionError("closed")
        body += chunk
    return bytes(body)


# ---------------------------------------------------------------- partitions

_CLIENT = r"""
import json, sys, time
import confluent_kafka as ck
from confluent_kafka.admin import AdminClient, NewTopic
mode, bootstrap = sys.argv[1], sys.argv[2]
topics, per_topic, per_request = map(int, sys.argv[3:6])
names = [f"scale-{i:05d}" for i in range(topics)]
out = {}


def read_back(parts, limit_s):  # seconds and records of one consumer reading parts from 0
    c = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": "scale", "enable.auto.commit": False,
                     "log_level": 3, "fetch.wait.max.ms": 100})
    t0 = time.monotonic()
    c.assign(parts)
    got = 0
    deadline = t0 + limit_s
    while got < len(parts) and time.monotonic() < deadline:
        for m in c.consume(10000, 0.05):
            if m.error() is None:
                got += 1
    seconds = time.monotonic() - t0
    c.close()
    return seconds, got


if mode == "create":
    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 3})
    admin.list_topics(timeout=60)  # connected before the clock starts
    batches = []
    t0 = time.monotonic()
    for i in range(0, topics, per_request):
        b0 = time.monotonic()
        fs = admin.create_topics([NewTopic(n, per_topic, 1) for n in names[i:i + per_request]],
                                 request_timeout=600, operation_timeout=600)
        for f in fs.values():
            f.result(900)
        batches.append(time.monotonic() - b0)
    out = {"seconds": time.monotonic() - t0, "batches": batches}
elif mode == "produce":
    p = ck.Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "log_level": 3,
                     "queue.buffering.max.messages": 1000000})
    value = b"x" * 100
    p.list_topics(timeout=60)
    t0 = time.monotonic()
    errors = []
    cb = lambda err, msg: err and errors.append(str(err))
    for n in names:
        for part in range(per_topic):
            p.produce(n, value, partition=part, on_delivery=cb)
        p.poll(0)
    left = p.flush(900)
    out = {"seconds": time.monotonic() - t0, "unsent": left, "errors": len(errors)}
elif mode == "warm":  # every kind of request the others send, once, on a topic of its own
    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 3})
    for f in admin.create_topics([NewTopic("scale-warm", 1, 1)]).values():
        f.result(60)
    p = ck.Producer({"bootstrap.servers": bootstrap, "log_level": 3})
    p.produce("scale-warm", b"x", partition=0)
    assert p.flush(60) == 0
    out = {"read": read_back([ck.TopicPartition("scale-warm", 0, 0)], 60)[1]}
else:
    parts = [ck.TopicPartition(n, part, 0) for n in names for part in range(per_topic)]
    seconds, got = read_back(parts, float(sys.argv[6]))
    out = {"seconds": seconds, "read": got}
print(json.dumps(out))
"""


def _client(mode: str, bootstrap: str, topics: int, limit_s: float = 900) -> dict:
    args = (topics, PARTITIONS_PER_TOPIC, TOPICS_PER_REQUEST, limit_s)
    out = subprocess.run(
        [sys.executable, "-c", _CLIENT, mode, bootstrap, *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    if out.returncode:
        raise RuntimeError(f"{mode} client failed:\n{out.stderr[-2000:]}")
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def _edge_ratio(batches: list[float], per_batch: int) -> float:
    """Cost per partition of the last 500 partitions over that of the first 500."""
    k = max(1, 500 // per_batch)
    if len(batches) < 2 * k:
        return float("nan")
    return sum(batches[-k:]) / max(1e-9, sum(batches[:k]))


def measure_partitions(kind: str, partitions: int, consume_limit_s: float) -> PartitionRow:
    row = PartitionRow(kind, partitions)
    topics = partitions // PARTITIONS_PER_TOPIC
    with broker(kind) as b:
        # memory a broker takes on once is a fixed cost, not the first partitions': what it
        # loads in the background once it listens (hmb: numpy, ~15 MB) and the modules of the
        # requests measured (hmb imports a handler when its key is first spoken, ~5 MB)
        if not _client("warm", b.bootstrap, 0)["read"]:
            raise RuntimeError(f"{kind}: the warm-up record was not read back")
        _settle(b.pid)
        row.rss_idle_mb = rss_bytes(b.pid) / 1e6
        if b.data_dir is not None:
            row.fs_ms_per_dir = fs_ms_per_dir(b.data_dir.parent)
        cpu0 = cpu_seconds(b.pid)
        created = _client("create", b.bootstrap, topics)
        row.create_cpu_s = cpu_seconds(b.pid) - cpu0
        row.create_s = created["seconds"]
        row.last_over_first = _edge_ratio(created["batches"], TOPICS_PER_REQUEST * PARTITIONS_PER_TOPIC)
        produced = _client("produce", b.bootstrap, topics)
        if produced["unsent"] or produced["errors"]:
            raise RuntimeError(f"{kind}: produce lost records: {produced}")
        row.produce_s = produced["seconds"]
        consumed = _client("consume", b.bootstrap, topics, consume_limit_s)
        row.consume_s, row.consumed = consumed["seconds"], consumed["read"]
        if row.consumed != partitions:
            print(
                f"  {kind}: read {row.consumed:,} of {partitions:,} records in {consume_limit_s:.0f}s",
                file=sys.stderr,
            )
        row.rss_mb = rss_bytes(b.pid) / 1e6
        if b.data_dir is not None:
            row.disk_running_mb = allocated_bytes(b.data_dir) / 1e6
        if b.process is not None and b.data_dir is not None:
            b.process.stop(timeout=300)
            row.disk_mb = allocated_bytes(b.data_dir) / 1e6
            row.restart_s, again = first_metadata_s(b.data_dir)
            again.kill()
            with tempfile.TemporaryDirectory(prefix="hmb-scale-empty-") as empty:
                row.empty_start_s, fresh = first_metadata_s(Path(empty) / "data")
                fresh.kill()
    return row


# ---------------------------------------------------------------- connections


def _open_all(bootstrap: str, count: int) -> list[socket.socket]:
    """``count`` connections, each having had one ApiVersions v0 answered."""
    host, port = bootstrap.rsplit(":", 1)
    request = kproto.encode_request(ApiKey.API_VERSIONS, 0, 1, {})
    socks: list[socket.socket] = []
    sel = selectors.DefaultSelector()
    for start in range(0, count, 500):  # in waves: the listen backlog is finite
        wave = []
        for _ in range(min(500, count - start)):
            s = socket.create_connection((host, int(port)), timeout=60)
            s.sendall(request)
            s.setblocking(False)
            sel.register(s, selectors.EVENT_READ)
            wave.append(s)
        pending = set(wave)
        deadline = time.monotonic() + 120
        while pending and time.monotonic() < deadline:
            for key, _ in sel.select(1.0):
                s = key.fileobj  # type: ignore[assignment]
                if s.recv(65536):
                    pending.discard(s)
                    sel.unregister(s)
        if pending:
            raise RuntimeError(f"{len(pending)} connections got no ApiVersions answer")
        socks += wave
    sel.close()
    return socks


def _produce_loop(socks: list[socket.socket], rounds: int) -> None:
    """Every socket sends ``rounds`` Produce requests, one in flight each, all at once."""
    b = RecordBatchBuilder(Compression.NONE, -1, -1, -1, False)
    b.append(None, b"x" * 100, 1_700_000_000_000, [])
    records = b.build()
    frames = [
        kproto.encode_request(
            ApiKey.PRODUCE,
            3,
            1,
            {
                "transactional_id": None,
                "acks": 1,
                "timeout_ms": 5000,
                "topic_data": [
                    {
                        "name": CONN_TOPIC,
                        "partition_data": [{"index": i % CONN_PARTITIONS, "records": records}],
                    }
                ],
            },
        )
        for i in range(len(socks))
    ]
    sel = selectors.DefaultSelector()
    left = {}
    for i, s in enumerate(socks):
        s.setblocking(True)
        s.sendall(frames[i])
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ, i)
        left[i] = rounds - 1
    buffers = {i: b"" for i in left}
    active = len(socks)
    deadline = time.monotonic() + 600
    while active and time.monotonic() < deadline:
        for key, _ in sel.select(1.0):
            i = key.data
            s = key.fileobj  # type: ignore[assignment]
            buffers[i] += s.recv(65536)
            while len(buffers[i]) >= 4:
                (size,) = struct.unpack(">i", buffers[i][:4])
                if len(buffers[i]) < 4 + size:
                    break
                buffers[i] = buffers[i][4 + size :]
                if left[i] > 0:
                    left[i] -= 1
                    s.setblocking(True)
                    s.sendall(frames[i])
                    s.setblocking(False)
                else:
                    sel.unregister(s)
                    active -= 1
    sel.close()
    if active:
        raise RuntimeError(f"{active} producing connections did not finish")


@dataclass
class ProbeSettings:
    paced: int = 20
    interval_ms: float = 200.0
    unloaded_s: float = 6.0  # about as long as the loaded phase: both p99s rest on as many samples
    open_repeats: int = 3
    placement: Placement | None = None


def _settle(pid: int, limit_s: float = 30.0) -> None:
    """Wait until the broker's CPU stops moving (two quiet 0.2 s readings in a row)."""
    deadline = time.monotonic() + limit_s
    quiet, last = 0, cpu_seconds(pid)
    while quiet < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
        now = cpu_seconds(pid)
        quiet = quiet + 1 if now - last < 0.015 else 0
        last = now


def measure_connections(
    kind: str, count: int, producing: int, idle_s: float, rounds: int, probe: ProbeSettings
) -> ConnectionRow:
    row = ConnectionRow(kind, count, producing=min(producing, count))
    place = probe.placement
    row.extra["placement"] = f"{place.describe()}, while latency is measured" if place else "unpinned"
    with broker(kind) as b:
        _client_create_topic(b.bootstrap)
        # one Produce to each partition first: a first use's one-time work (a handler's imports,
        # opening a partition's log) is not what a loaded broker's latency is about
        warm = _open_all(b.bootstrap, CONN_PARTITIONS)
        _produce_loop(warm, 1)
        for s in warm:
            s.close()
        # latency is measured placed, CPU and memory as a user runs it
        with place.around(b.pid) if place else nullcontext():
            unloaded = Probe(b.bootstrap, probe.paced, probe.interval_ms, place)
            time.sleep(probe.unloaded_s)  # the measurement itself: the probe alone against the broker
            quiet = unloaded.stop()
        row.p99_unloaded_ms = p99_ms(quiet["paced"])
        row.p50_unloaded_ms = percentile_ms(quiet["paced"], 0.5)
        row.closed_p99_unloaded_ms = p99_ms(quiet["closed"])
        rss0 = rss_bytes(b.pid)
        opened = []  # CPU is read in 10 ms ticks: the figure is the median of several openings
        for _ in range(probe.open_repeats - 1):
            cpu0 = cpu_seconds(b.pid)
            socks = _open_all(b.bootstrap, count)
            opened.append((cpu_seconds(b.pid) - cpu0) * 1000 / count)
            for s in socks:
                s.close()
            _settle(b.pid)  # the closing is not the next opening's cost
        cpu0 = cpu_seconds(b.pid)
        socks = _open_all(b.bootstrap, count)
        try:
            cpu1 = cpu_seconds(b.pid)
            opened.append((cpu1 - cpu0) * 1000 / count)
            row.open_cpu_ms_per_conn = statistics.median(opened)
            row.extra["open_cpu_ms_per_conn"] = opened
            time.sleep(idle_s)  # the measurement itself: the broker idles with every connection open
            cpu2 = cpu_seconds(b.pid)
            row.idle_cpu_us_per_conn_s = (cpu2 - cpu1) * 1e6 / count / idle_s
            row.rss_kb_per_conn = (rss_bytes(b.pid) - rss0) / 1024 / count
            with place.around(b.pid) if place else nullcontext():
                loaded = Probe(b.bootstrap, probe.paced, probe.interval_ms, place)
                cpu3, wait3 = cpu_seconds(b.pid), run_queue_wait_s(b.pid)
                t0 = time.monotonic()
                _produce_loop(socks[: row.producing], rounds)
                row.produce_cpu_s = cpu_seconds(b.pid) - cpu3
                row.produce_runq_wait_s = run_queue_wait_s(b.pid) - wait3
                row.extra["produce_wall_s"] = time.monotonic() - t0
                busy = loaded.stop()
            row.p99_loaded_ms = p99_ms(busy["paced"])
            row.p50_loaded_ms = percentile_ms(busy["paced"], 0.5)
            row.closed_p99_loaded_ms = p99_ms(busy["closed"])
            row.extra["samples"] = {
                "unloaded": {k: len(v) for k, v in quiet.items()},
                "loaded": {k: len(v) for k, v in busy.items()},
            }
        finally:
            for s in socks:
                s.close()
    return row


def _client_create_topic(bootstrap: str) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 3})
    for f in admin.create_topics([NewTopic(CONN_TOPIC, CONN_PARTITIONS, 1)]).values():
        f.result(60)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m bench scale",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--partitions", default="1000,3000,10000", help="comma-separated partition counts")
    ap.add_argument(
        "--connections", default="1000,10000", help="comma-separated connection counts ('' skips)"
    )
    ap.add_argument("--producing", type=int, default=1000, help="connections producing at once")
    ap.add_argument(
        "--produce-rounds", type=int, default=50, help="Produce requests per producing connection"
    )
    ap.add_argument("--probe-paced", type=int, default=20, help="paced probe connections")
    ap.add_argument(
        "--probe-interval-ms", type=float, default=200.0, help="each paced probe connection's interval"
    )
    ap.add_argument(
        "--probe-unloaded-seconds",
        type=float,
        default=ProbeSettings.unloaded_s,
        help="how long the probe runs against the unloaded broker (the loaded phase lasts 5-6 s "
        "here; a p99 from fewer samples rests on its few largest)",
    )
    ap.add_argument(
        "--open-repeats",
        type=int,
        default=3,
        help="openings of the connections; CPU per connection is the median",
    )
    ap.add_argument(
        "--no-pin",
        action="store_true",
        help="connections phase: leave the broker, load and probe to the scheduler (default: the "
        "broker on half the CPUs, load and a real-time probe on the rest; see Placement)",
    )
    ap.add_argument("--idle-seconds", type=float, default=10.0, help="idle window for the idle-CPU figure")
    ap.add_argument("--brokers", default="hmb,tansu")
    ap.add_argument(
        "--consume-limit",
        type=float,
        default=180,
        help="seconds the consumer may take to read every partition",
    )
    ap.add_argument(
        "--out", type=Path, default=ROOT / "bench" / "results" / f"scale-{time.strftime('%Y-%m-%d')}"
    )
    args = ap.parse_args(argv)
    raise_nofile()
    kinds = [k for k in args.brokers.split(",") if k]
    sizes = [int(x) for x in args.partitions.split(",") if x]
    conn_sizes = [int(x) for x in args.connections.split(",") if x]
    args.out.mkdir(parents=True, exist_ok=True)
    parts: list[PartitionRow] = []
    conns: list[ConnectionRow] = []
    for n in sizes:
        for kind in kinds:
            print(f"partitions {n:,} on {kind} ...", file=sys.stderr, flush=True)
            parts.append(measure_partitions(kind, n, args.consume_limit))
            print(f"  {asdict(parts[-1])}", file=sys.stderr, flush=True)
    for n in conn_sizes:
        for kind in kinds:
            print(f"connections {n:,} on {kind} ...", file=sys.stderr, flush=True)
            probe = ProbeSettings(
                args.probe_paced,
                args.probe_interval_ms,
                args.probe_unloaded_seconds,
                open_repeats=args.open_repeats,
                placement=None if args.no_pin else Placement.choose(),
            )
            conns.append(
                measure_connections(kind, n, args.producing, args.idle_seconds, args.produce_rounds, probe)
            )
            print(f"  {asdict(conns[-1])}", file=sys.stderr, flush=True)
    header = (
        f"# Scale: cost against the size of the work\n\nMachine: {machine_info()}; "
        f"{time.strftime('%Y-%m-%d %H:%M %Z')}; `python -m bench scale "
        f"{' '.join(argv if argv is not None else sys.argv[1:])}`."
    )
    md = render(parts, conns, header)
    (args.out / "report.md").write_text(md)
    (args.out / "rows.json").write_text(
        json.dumps(
            {"partitions": [asdict(r) for r in parts], "connections": [asdict(r) for r in conns]}, indent=1
        )
    )
    plot(parts, conns, args.out / "scale.png")
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
