"""Load: many connections, idempotent producers and consumers at once, for minutes.

    python -m bench.load --connections 1000 --producers 50 --consumers 50 --duration 180 --partitions 50
    python -m bench.load --bootstrap 127.0.0.1:9092 ...      # against a running broker

One topic with ``--partitions`` partitions; producer *i* writes partition
``i % partitions`` and consumer *j* reads partition ``j % partitions``.

* **Idle connections** (one trio process): ``--connections`` sockets held
  open all along, each a real client that sends ApiVersions or Metadata
  every 5-15 s and expects its answer within 10 s.
* **Producers** (hmb_client, ``enable_idempotence=True``, acks=all), spread
  over ``--producer-procs`` processes to get past the GIL, each sending
  ``--rate`` records/s at a steady pace (open loop: a late broker shows as a
  lower achieved rate and a higher ack latency, not as a slower schedule).
  A record's value starts with ``producer:seq``; a record counts as
  acknowledged when its future completes without error.
* **Consumers** (hmb_client, ``assign``), in ``--consumer-procs`` processes,
  each checking on the fly that every producer's sequence numbers arrive in
  order without repeats.  The last ``--slow`` consumers keep up during the
  first third of the run (phase A) and then read only ``--slow-rate``
  records/s (phase B), so they fall behind and fetch old data.
* **The broker**: RSS and open descriptors sampled every second.

At the end every partition is read from offset 0 and checked: every
acknowledged (producer, seq) present (no loss), none twice (no duplicates),
each producer's records in sequence order.  *Slow consumers do not slow
producers on other partitions* is measured within the run: the producers of
partitions without a slow consumer are compared between phase A and B
(achieved rate against the target, ack latency p50/p99), and in phase B
against the producers of the slow consumers' partitions.

The report (Markdown and a PNG of RSS over time) goes to ``--out``
(default bench/results/load-<date>.md/.png).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"


@dataclass(frozen=True)
class LoadConfig:
    bootstrap: str = ""
    topic: str = "load"
    partitions: int = 50
    connections: int = 1000
    producers: int = 50
    consumers: int = 50
    slow: int = 5
    slow_rate: float = 20.0  # records/s a slow consumer reads in phase B
    duration: float = 180.0
    rate: float = 100.0  # records/s per producer
    size: int = 100
    producer_procs: int = 5
    consumer_procs: int = 5

    def slow_partitions(self) -> set[int]:
        return {j % self.partitions for j in range(self.consumers - self.slow, self.consumers)}


@dataclass
class LoadResult:
    config: LoadConfig
    started: str = ""
    elapsed: float = 0.0
    rss: list[tuple[float, int]] = field(default_factory=list)  # (seconds, bytes)
    fds: list[tuple[float, int]] = field(default_factory=list)
    loadavg: list[tuple[float, float]] = field(default_factory=list)
    producers: list[dict[str, Any]] = field(default_factory=list)
    consumers: list[dict[str, Any]] = field(default_factory=list)
    idle: dict[str, Any] = field(default_factory=dict)
    verify: dict[str, Any] = field(default_factory=dict)
    broker_errors: list[str] = field(default_factory=list)

    # ------------------------------------------------------------ the verdicts

    @property
    def acked(self) -> int:
        return sum(len(p["acked"]) for p in self.producers)

    @property
    def errors(self) -> list[str]:
        out = [f"producer {p['id']}: {e}" for p in self.producers for e in p["errors"]]
        out += [f"consumer {c['id']}: {e}" for c in self.consumers for e in c["errors"]]
        out += [f"idle connections: {e}" for e in self.idle.get("errors", [])]
        out += [f"broker log: {line}" for line in self.broker_errors]
        return out

    def phase_stats(self, phase: str, slow: bool) -> dict[str, float]:
        """Producers of partitions with (``slow``) or without a slow consumer, in phase A or B."""
        chosen = [p for p in self.producers if (p["partition"] in self.config.slow_partitions()) == slow]
        ph = [p["phases"][phase] for p in chosen if p["phases"][phase]["seconds"] > 0]
        if not ph:
            return {}
        return {
            "producers": len(ph),
            "rate": statistics.fmean(x["acked"] / x["seconds"] for x in ph),
            "p50_ms": statistics.median(x["p50_ms"] for x in ph),
            "p99_ms": max(x["p99_ms"] for x in ph),
        }


def _record(pid: int, seq: int, size: int) -> bytes:
    return f"{pid}:{seq}:".encode().ljust(size, b".")


def _parse(value: bytes) -> tuple[int, int]:
    pid, seq, _ = value.split(b":", 2)
    return int(pid), int(seq)


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


# ---------------------------------------------------------------------------- producers


def _producer_worker(cfg: LoadConfig, ids: list[int], start_at: float, q: Any) -> None:
    from hmb_client.producer import Producer

    stop_at = start_at + cfg.duration
    phase_b = start_at + cfg.duration / 3
    states: list[dict[str, Any]] = []
    for pid in ids:
        prod = Producer(cfg.bootstrap, enable_idempotence=True, client_id=f"load-p{pid}", linger_ms=5)
        states.append(
            {
                "id": pid,
                "partition": pid % cfg.partitions,
                "producer": prod,
                "sent": 0,
                "acked": [],
                "errors": [],
                "lat": {"A": [], "B": []},
                "acked_in": {"A": 0, "B": 0},
                "per_second": {},
            }
        )

    def on_ack(st: dict[str, Any], seq: int, sent: float) -> Any:
        def ok(_md: Any) -> None:
            now = time.time()
            st["acked"].append(seq)
            phase = "A" if sent < phase_b else "B"
            st["lat"][phase].append(now - sent)
            st["acked_in"][phase] += 1
            sec = int(now - start_at)
            st["per_second"][sec] = st["per_second"].get(sec, 0) + 1

        return ok

    def on_error(st: dict[str, Any]) -> Any:
        def err(exc: BaseException) -> None:
            if len(st["errors"]) < 20:
                st["errors"].append(repr(exc))

        return err

    time.sleep(max(0.0, start_at - time.time()))
    while (now := time.time()) < stop_at:
        due = int((now - start_at) * cfg.rate) + 1
        for st in states:
            while st["sent"] < due:
                seq = st["sent"]
                try:
                    fut = st["producer"].send(
                        cfg.topic, _record(st["id"], seq, cfg.size), partition=st["partition"]
                    )
                except Exception as exc:  # a full buffer or a closed producer: an error
                    on_error(st)(exc)
                    st["sent"] += 1
                    continue
                fut.add_callback(on_ack(st, seq, time.time()))
                fut.add_errback(on_error(st))
                st["sent"] += 1
        time.sleep(0.01)
    for st in states:
        try:
            st["producer"].flush(60)
            st["producer"].close(10)
        except Exception as exc:
            on_error(st)(exc)
    seconds = {"A": cfg.duration / 3, "B": cfg.duration * 2 / 3}
    q.put(
        [
            {
                "id": st["id"],
                "partition": st["partition"],
                "sent": st["sent"],
                "acked": st["acked"],
                "errors": st["errors"],
                "per_second": st["per_second"],
                "phases": {
                    ph: {
                        "seconds": seconds[ph],
                        "acked": st["acked_in"][ph],
                        "p50_ms": 1000 * _percentile(st["lat"][ph], 0.5),
                        "p99_ms": 1000 * _percentile(st["lat"][ph], 0.99),
                    }
                    for ph in ("A", "B")
                },
            }
            for st in states
        ]
    )


# ---------------------------------------------------------------------------- consumers


def _consume(cfg: LoadConfig, cid: int, start_at: float, out: dict[str, Any]) -> None:
    from hmb_client.consumer import Consumer
    from hmb_client.structs import TopicPartition

    partition = cid % cfg.partitions
    slow = cid >= cfg.consumers - cfg.slow
    stop_at = start_at + cfg.duration
    phase_b = start_at + cfg.duration / 3
    out.update(id=cid, partition=partition, slow=slow, consumed=0, out_of_order=0, errors=[], lag=None)
    last: dict[int, int] = {}
    c = Consumer(cfg.bootstrap, auto_offset_reset="earliest", client_id=f"load-c{cid}")
    tp = TopicPartition(cfg.topic, partition)
    try:
        c.assign([tp])
        budget_t0, budget_n = 0.0, 0
        while (now := time.time()) < stop_at:
            limit = None
            if slow and now >= phase_b:
                if not budget_t0:
                    budget_t0 = now
                allowed = int((now - budget_t0) * cfg.slow_rate) - budget_n
                if allowed <= 0:
                    time.sleep(0.05)
                    continue
                limit = allowed
            try:
                records = c.poll(0.2, max_records=limit)
            except Exception as exc:
                if len(out["errors"]) < 20:
                    out["errors"].append(repr(exc))
                continue
            budget_n += len(records) if budget_t0 else 0
            for r in records:
                pid, seq = _parse(r.value or b"")
                if seq != last.get(pid, -1) + 1:
                    out["out_of_order"] += 1
                last[pid] = seq
            out["consumed"] += len(records)
        out["lag"] = c.end_offsets([tp])[tp] - c.position(tp)
    except Exception as exc:
        out["errors"].append(repr(exc))
    finally:
        c.close(autocommit=False)


def _consumer_worker(cfg: LoadConfig, ids: list[int], start_at: float, q: Any) -> None:
    outs: list[dict[str, Any]] = [{} for _ in ids]
    threads = [
        threading.Thread(target=_consume, args=(cfg, cid, start_at, out), daemon=True)
        for cid, out in zip(ids, outs, strict=True)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(cfg.duration + 120)
    q.put(outs)


# ---------------------------------------------------------------------------- idle connections


def _idle_worker(cfg: LoadConfig, stop: Any, q: Any) -> None:
    import trio

    import kproto

    host, _, port_s = cfg.bootstrap.rpartition(":")
    stats: dict[str, Any] = {"opened": 0, "requests": 0, "errors": [], "max_latency_s": 0.0, "open_peak": 0}
    open_now = [0]
    all_open = trio.Event()

    async def client(i: int) -> None:
        rng = random.Random(i)
        try:
            stream = await trio.open_tcp_stream(host, int(port_s))
        except OSError as exc:
            stats["errors"].append(f"connect: {exc!r}")
            return
        stats["opened"] += 1
        open_now[0] += 1
        stats["open_peak"] = max(stats["open_peak"], open_now[0])
        decoder = kproto.FrameDecoder()
        cid = 0
        try:
            async with stream:
                await all_open.wait()
                while True:
                    await trio.sleep(rng.uniform(5, 15))
                    cid += 1
                    if cid % 2:
                        frame = kproto.encode_request(18, 0, cid, {}, client_id=f"idle-{i}")
                    else:
                        frame = kproto.encode_request(3, 1, cid, {"topics": [{"name": cfg.topic}]})
                    t0 = time.monotonic()
                    await stream.send_all(frame)
                    with trio.fail_after(10):
                        while (got := decoder.next_frame()) is None:
                            data = await stream.receive_some(1 << 16)
                            if not data:
                                raise ConnectionError("closed by the broker")
                            decoder.feed(data)
                    if int.from_bytes(got[4:8], "big") != cid:
                        raise ConnectionError("wrong correlation id")
                    stats["requests"] += 1
                    stats["max_latency_s"] = max(stats["max_latency_s"], time.monotonic() - t0)
        except (OSError, ConnectionError, trio.TooSlowError, trio.BrokenResourceError) as exc:
            if len(stats["errors"]) < 20:
                stats["errors"].append(f"connection {i}: {exc!r}")
        finally:
            open_now[0] -= 1

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            for i in range(cfg.connections):
                nursery.start_soon(client, i)
                if i % 50 == 49:
                    await trio.sleep(0.05)  # not all SYNs at once
            with trio.move_on_after(60):
                while stats["opened"] + len(stats["errors"]) < cfg.connections:
                    await trio.sleep(0.05)
            q.put({"ready": stats["opened"]})
            all_open.set()
            while not stop.is_set():
                await trio.sleep(0.2)
            nursery.cancel_scope.cancel()

    trio.run(main)
    q.put(stats)


# ---------------------------------------------------------------------------- verification


def verify(cfg: LoadConfig, producers: list[dict[str, Any]]) -> dict[str, Any]:
    """Every partition from offset 0: loss, duplicates, per-producer order."""
    from hmb_client.consumer import Consumer
    from hmb_client.structs import TopicPartition

    tps = [TopicPartition(cfg.topic, p) for p in range(cfg.partitions)]
    seen: dict[int, list[tuple[int, int]]] = {p: [] for p in range(cfg.partitions)}  # (pid, seq)
    c = Consumer(cfg.bootstrap, auto_offset_reset="earliest", client_id="load-verify")
    try:
        c.assign(tps)
        c.seek_to_beginning()
        ends = c.end_offsets(tps)
        deadline = time.monotonic() + 300
        while any(c.position(tp) < ends[tp] for tp in tps) and time.monotonic() < deadline:
            for r in c.poll(1.0, max_records=10_000):
                seen[r.partition].append(_parse(r.value or b""))
    finally:
        c.close(autocommit=False)
    records = sum(len(v) for v in seen.values())
    duplicates = out_of_order = 0
    present: dict[int, set[int]] = {}
    for part, recs in seen.items():
        last: dict[int, int] = {}
        for pid, seq in recs:
            got = present.setdefault(pid, set())
            if seq in got:
                duplicates += 1
            got.add(seq)
            if seq <= last.get(pid, -1):
                out_of_order += 1
            last[pid] = seq
        del part
    lost = [(p["id"], s) for p in producers for s in p["acked"] if s not in present.get(p["id"], ())]
    return {
        "records": records,
        "log_end_total": sum(ends.values()),
        "duplicates": duplicates,
        "out_of_order": out_of_order,
        "lost": len(lost),
        "lost_examples": lost[:10],
        "unacked_but_present": records - duplicates - sum(len(p["acked"]) for p in producers),
    }


# ---------------------------------------------------------------------------- the run


def _split(ids: list[int], parts: int) -> list[list[int]]:
    parts = max(1, min(parts, len(ids)))
    return [ids[k::parts] for k in range(parts) if ids[k::parts]]


def run_load(cfg: LoadConfig, data_dir: Path | None = None, progress: Any = None) -> LoadResult:
    """Start a broker unless ``cfg.bootstrap`` names one, run the load, verify; the figures."""
    from bench.hmb_process import BrokerProcess
    from hmb_client.admin import Admin

    broker = None
    with tempfile.TemporaryDirectory(prefix="hmb-load-") as tmp:
        if not cfg.bootstrap:
            broker = BrokerProcess(data_dir or Path(tmp) / "data").start()
            cfg = LoadConfig(**{**asdict(cfg), "bootstrap": broker.bootstrap})
        result = LoadResult(cfg, started=time.strftime("%Y-%m-%d %H:%M:%S %Z"))
        try:
            with Admin(cfg.bootstrap) as admin:
                admin.create_topic(cfg.topic, cfg.partitions)
            _run(cfg, result, broker, progress)
            result.verify = verify(cfg, result.producers)
        finally:
            if broker is not None:
                result.broker_errors = [
                    line.rstrip() for line in broker.lines if " ERROR " in line or "Traceback" in line
                ][:50]
                if not broker.alive():
                    result.broker_errors.append("the broker process died")
                broker.kill()
    return result


def _run(cfg: LoadConfig, result: LoadResult, broker: Any, progress: Any) -> None:
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    stop = ctx.Event()
    # the idle connections first, then everything else starts together
    idle = ctx.Process(target=_idle_worker, args=(cfg, stop, q), daemon=True)
    idle.start()
    ready = q.get(timeout=120)
    start_at = time.time() + 5 + cfg.producers / 10  # time for producers and consumers to connect
    if progress:
        progress(f"{ready['ready']} idle connections open; starting producers and consumers")
    procs = [
        ctx.Process(target=_producer_worker, args=(cfg, ids, start_at, q), daemon=True)
        for ids in _split(list(range(cfg.producers)), cfg.producer_procs)
    ]
    procs += [
        ctx.Process(target=_consumer_worker, args=(cfg, ids, start_at, q), daemon=True)
        for ids in _split(list(range(cfg.consumers)), cfg.consumer_procs)
    ]
    for p in procs:
        p.start()
    expected = len(procs)
    got: list[Any] = []
    next_sample = time.time()
    while len(got) < expected:
        now = time.time()
        if now >= next_sample:
            next_sample += 1.0
            since = now - start_at
            if broker is not None and broker.alive():
                result.rss.append((since, broker.rss_bytes()))
                result.fds.append((since, len(os.listdir(f"/proc/{broker.proc.pid}/fd"))))
            result.loadavg.append((since, os.getloadavg()[0]))
            if progress and int(since) % 10 == 0 and result.rss:
                progress(f"t={since:5.0f} s  broker RSS {result.rss[-1][1] / 2**20:.0f} MiB")
        try:
            got.append(q.get(timeout=max(0.01, next_sample - time.time())))
        except Exception:  # queue.Empty
            dead = [p.exitcode for p in procs if p.exitcode not in (None, 0)]
            if dead:
                raise RuntimeError(f"{len(dead)} worker process(es) failed: exit codes {dead}") from None
            if now > start_at + cfg.duration + 300:
                raise RuntimeError("workers did not report within 5 minutes of the end") from None
    stop.set()
    result.idle = q.get(timeout=60)
    for item in got:
        if item and "sent" in item[0]:
            result.producers += item
        else:
            result.consumers += item
    result.producers.sort(key=lambda p: p["id"])
    result.consumers.sort(key=lambda c: c["id"])
    result.elapsed = time.time() - start_at
    for p in [idle, *procs]:
        p.join(30)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m bench.load", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    d = LoadConfig()
    ap.add_argument("--bootstrap", default="", help="HOST:PORT of a running broker (default: start hmb)")
    ap.add_argument("--connections", type=int, default=d.connections)
    ap.add_argument("--producers", type=int, default=d.producers)
    ap.add_argument("--consumers", type=int, default=d.consumers)
    ap.add_argument("--slow", type=int, default=d.slow, help="slow consumers (the last ones)")
    ap.add_argument("--slow-rate", type=float, default=d.slow_rate)
    ap.add_argument("--partitions", type=int, default=d.partitions)
    ap.add_argument("--duration", type=float, default=d.duration, help="seconds of producing")
    ap.add_argument("--rate", type=float, default=d.rate, help="records/s per producer")
    ap.add_argument("--size", type=int, default=d.size)
    ap.add_argument("--producer-procs", type=int, default=d.producer_procs)
    ap.add_argument("--consumer-procs", type=int, default=d.consumer_procs)
    ap.add_argument("--out", type=Path, help="report path (default bench/results/load-<date>.md)")
    args = ap.parse_args(argv)
    # every option is named after its LoadConfig field (``--out`` is the report's)
    cfg = LoadConfig(**{f.name: getattr(args, f.name) for f in fields(LoadConfig) if hasattr(args, f.name)})
    result = run_load(cfg, progress=lambda msg: print(msg, flush=True))
    out = args.out or RESULTS / f"load-{time.strftime('%Y-%m-%d')}.md"
    from bench.load_report import report

    report(result, out, "python -m bench.load " + " ".join(argv if argv is not None else sys.argv[1:]))
    v = result.verify
    print(
        f"{result.acked:,} acknowledged; lost {v['lost']}, duplicates {v['duplicates']}, "
        f"out of order {v['out_of_order']}; {len(result.errors)} errors; "
        f"RSS max {max((b for _, b in result.rss), default=0) / 2**20:.0f} MiB; report {out}"
    )
    for e in result.errors[:10]:
        print("  ", e)
    ok = not result.errors and not v["lost"] and not v["duplicates"] and not v["out_of_order"]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
