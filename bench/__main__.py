"""``python -m bench``: the thesis's throughput studies, aggregated with PySpark.

    python -m bench batch-size              # Table 10.3: 100 B messages, batch 195 .. 56769 B
    python -m bench message-size            # Table 10.5: batch 12800 B, messages 10 .. 100000 B
    python -m bench batch-size --quick      # a minute or two: subset of cells, short windows
    python -m bench report RESULTS_DIR      # re-aggregate a finished or interrupted run
    python -m bench reliability trak|rack|faults|quick   # loss and duplicates under faults
    python -m bench scale [--partitions 1000,3000,10000]  # cost against partitions and connections
    python -m bench compaction [--updates N --keys K]    # changelog restore, cleaner MB/s, produce ratio
    python -m bench compaction-crash [--iterations 50]   # SIGKILL while the cleaner works
    python -m bench eos-kills [--kills 30 --target app|broker --cluster]  # exactly-once under SIGKILL
    python -m bench replica-kills [--kills 30 --acks all|1]  # leader kill -9 loop, RF=3, 3 brokers

Four scenarios (producer -> broker): S1 librdkafka -> reference, S2
librdkafka -> hmb, S3 hmb_client -> reference, S4 hmb_client -> hmb.  The
reference broker is Tansu (started here, memory storage) unless
``--kafka-bootstrap`` names a Kafka-compatible broker to use instead.
Beyond the thesis: the same matrix for consumers (C1..C4, the client
reading from the broker) and produce-to-consume latency at a fixed rate.

Output in ``--out`` (default bench/results/<study>-<date>): samples.jsonl
(every second measured), samples.parquet, report.md (tables with the
thesis's figures beside ours) and PNG plots.
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from pathlib import Path
from typing import Any

from bench import studies
from bench.hmb_process import ROOT
from bench.tansu import TansuUnavailableError, tansu_binary
from bench.tcp_sampler import have_ss


def _check_prerequisites(cfg: studies.RunConfig) -> str | None:
    """What is missing to run, and how to get it; None when everything is here."""
    try:
        import confluent_kafka  # noqa: F401
    except ImportError:
        return "confluent-kafka (librdkafka, the 'Kafka producer') is missing: pip install confluent-kafka"
    if not cfg.kafka_bootstrap:
        try:
            tansu_binary()
        except TansuUnavailableError as exc:
            return f"{exc}; or pass --kafka-bootstrap HOST:PORT of a Kafka-compatible broker"
    if not have_ss():
        return "`ss` (iproute2) is missing: it reads the kernel's TCP counters; apt-get install iproute2"
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return "pyspark is missing (it aggregates the samples): pip install pyspark; it needs Java 17"
    return None


def reliability_help() -> str:
    from bench import reliability

    return reliability.__doc__ or ""


def _eta(seconds: float) -> str:
    m, s = divmod(int(seconds), 60)
    return f"{m}m{s:02d}s" if m else f"{s}s"


def run_study(name: str, args: argparse.Namespace) -> int:
    from hmb_client.progress import Progress

    cfg = studies.RunConfig(
        warmup_s=args.warmup,
        window_s=args.window,
        repetitions=args.repetitions,
        quick=args.quick,
        kafka_bootstrap=args.kafka_bootstrap,
        consume=not args.no_consume,
        latency=not args.no_latency,
        consume_records=args.consume_records,
        latency_rate=args.latency_rate,
        linger_ms=args.linger_ms,
    )
    if args.quick:
        cfg.warmup_s, cfg.window_s, cfg.repetitions = min(cfg.warmup_s, 1), min(cfg.window_s, 2), 1
        cfg.consume_records, cfg.latency_s = min(cfg.consume_records, 200_000), 3
    if problem := _check_prerequisites(cfg):
        print(f"error: {problem}", file=sys.stderr)
        return 2
    study = studies.STUDIES[name]
    out_dir: Path = args.out or ROOT / "bench" / "results" / f"{name}-{time.strftime('%Y-%m-%d')}"
    samples = out_dir / "samples.jsonl"
    if samples.exists() and not args.append:
        samples.unlink()
    write, close = studies.samples_to_jsonl(samples)
    tasks = studies.plan(study, cfg)
    total = sum(t.seconds for t in tasks)
    # SIGTERM as Ctrl-C: the context managers then stop every process this run started.
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    print(f"{name}: {len(tasks)} measurements, about {_eta(total)}; samples -> {samples}", file=sys.stderr)
    done = 0.0
    started = time.monotonic()
    try:
        with Progress(total=total, unit="s") as bar:
            for task in tasks:
                elapsed = time.monotonic() - started
                eta = (elapsed / done * (total - done)) if done else total
                bar.update(done, f"{task.label} | ETA {_eta(eta)}")
                studies.run_task(study, task, cfg, write)
                done += task.seconds
            bar.update(total, "aggregating with Spark")
    except KeyboardInterrupt:
        print(
            "\ninterrupted: the samples so far are kept; `python -m bench report` renders them",
            file=sys.stderr,
        )
        return 130
    finally:
        close()
    return report(out_dir, args.spark_master)


def run_reliability(args: argparse.Namespace) -> int:
    import json

    from bench import reliability
    from hmb_client.progress import Progress

    clients = tuple(c.strip() for c in args.clients.split(",") if c.strip())
    bad = set(clients) - {"hmb", "librdkafka"}
    if bad:
        print(f"error: unknown client(s) {sorted(bad)}: use hmb and/or librdkafka", file=sys.stderr)
        return 2
    records = (
        args.records or {"quick": 3000, "trak": 100_000, "rack": 100_000, "faults": 100_000}[args.matrix]
    )
    if args.matrix == "quick":
        runs = reliability.quick(records, clients)
    elif args.matrix == "trak":
        runs = reliability.trak(records, args.repetitions, clients)
    elif args.matrix == "rack":
        runs = reliability.rack(records, args.repetitions, clients, args.rate)
    else:
        runs = reliability.extra(records, args.repetitions, clients, args.rate)
    if args.cluster:
        from bench import reliability_cluster

        if problem := reliability_cluster.unavailable():
            print(f"error: --cluster needs ZooKeeper: {problem}", file=sys.stderr)
            return 2
        runs = reliability_cluster.cluster_runs(runs, args.matrix, args.cluster)
        if args.matrix == "quick":  # the suite's short version: loss is the trak and rack matrices'
            runs = [r for r in runs if r.fault.kind != "loss"]
    if args.semantics:
        wanted = {s.strip() for s in args.semantics.split(",")}
        runs = [r for r in runs if r.semantics.name in wanted]
    kinds = {k.strip() for k in args.faults.split(",") if k.strip()} if args.faults else None
    if kinds is not None:
        if unknown := kinds - {"none", "loss", "delay", "stall", "reset", "kill", "partition"}:
            print(f"error: unknown fault kind(s) {sorted(unknown)}", file=sys.stderr)
            return 2
        runs = [r for r in runs if r.fault.kind in kinds]
    if args.matrix in ("trak", "rack") and (problem := reliability.netns.unavailable()):
        print(f"note: {problem}; the packet-loss cells are skipped", file=sys.stderr)
        runs = [r for r in runs if r.fault.kind != "loss"]
    where = f"{args.matrix}-cluster" if args.cluster else args.matrix
    out_dir: Path = args.out or ROOT / "bench" / "results" / f"reliability-{where}-{time.strftime('%F')}"
    out_dir.mkdir(parents=True, exist_ok=True)
    outcomes = out_dir / "outcomes.jsonl"
    skipped: dict[str, str] = {}  # semantics -> why this build cannot run that row
    if outcomes.exists() and args.resume:  # an interrupted matrix: run only what has no row yet
        done = {_run_key(json.loads(line)) for line in outcomes.read_text().splitlines() if line}
        runs = [r for r in runs if _run_key(r) not in done]
        skips = out_dir / "skipped.jsonl"  # a row left out before is tried again: its reason goes
        if skips.exists():
            again = {r.semantics.name for r in runs}
            kept = [x for x in skips.read_text().splitlines() if json.loads(x)["semantics"] not in again]
            skips.write_text("".join(x + "\n" for x in kept))
    elif outcomes.exists() and not args.append:
        outcomes.unlink()
        (out_dir / "skipped.jsonl").unlink(missing_ok=True)
    elif outcomes.exists() and kinds is not None:  # a rerun of some cells replaces their rows
        lines = outcomes.read_text().splitlines()
        kept = [line for line in lines if json.loads(line)["fault_kind"] not in kinds]
        outcomes.write_text("".join(line + "\n" for line in kept))
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    print(
        f"reliability {args.matrix}: {len(runs)} runs of {records:,} messages -> {outcomes}", file=sys.stderr
    )
    started = time.monotonic()
    try:
        with Progress(total=len(runs), unit="runs") as bar, outcomes.open("a") as f:
            for i, run in enumerate(runs):
                eta = (time.monotonic() - started) / i * (len(runs) - i) if i else 0
                bar.update(i, f"{run.client} {run.semantics.name} {run.fault.label} | ETA {_eta(eta)}")
                if run.semantics.name in skipped:
                    continue
                try:
                    outcome = reliability.execute(run, args.delivery_timeout)
                except reliability.RowSkippedError as why:  # said, recorded, the row left out
                    bar.println(f"skipped: {why}")
                    skipped[run.semantics.name] = str(why)
                    with (out_dir / "skipped.jsonl").open("a") as s:
                        s.write(json.dumps({"semantics": run.semantics.name, "reason": str(why)}) + "\n")
                    continue
                f.write(json.dumps(reliability.outcome_row(outcome)) + "\n")
                f.flush()
                if outcome.lost_acked:
                    bar.println(f"ACKNOWLEDGED MESSAGES LOST: {outcome.lost_acked} in {run}")
            bar.update(len(runs), "aggregating with Spark")
    except KeyboardInterrupt:
        print(
            "\ninterrupted: the runs so far are kept; `python -m bench report` renders them", file=sys.stderr
        )
        return 130
    return report(out_dir, args.spark_master)


def _run_key(run: Any) -> tuple[str, str, str, int, int]:
    """What names one run of a matrix, from the run (``reliability.Run``) or its row in outcomes.jsonl."""
    if isinstance(run, dict):
        return run["client"], run["semantics"], run["fault"], run["message_size"], run["repetition"]
    return run.client, run.semantics.name, run.fault.label, run.message_size, run.repetition


def report(out_dir: Path, master: str | None) -> int:
    from bench.report import render, render_reliability

    samples, outcomes = out_dir / "samples.jsonl", out_dir / "outcomes.jsonl"
    if samples.exists():
        md, pngs = render(samples, out_dir, master)
    elif outcomes.exists():
        md, pngs = render_reliability(outcomes, out_dir, master)
    else:
        print(f"error: no samples.jsonl or outcomes.jsonl in {out_dir}", file=sys.stderr)
        return 2
    print(md.read_text())
    print(f"report: {md}; plots: {', '.join(p.name for p in pngs)}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["scale"]:  # its own options: bench/scale.py parses them
        from bench import scale

        return scale.main(argv[1:])
    if argv[:1] in (["compaction"], ["compaction-crash"]):  # their own options: bench/compaction.py
        from bench import compaction

        return (compaction.main if argv[0] == "compaction" else compaction.crash_main)(argv[1:])
    if argv[:1] == ["replica-kills"]:  # its own options: bench/replica_kills.py
        from bench import replica_kills

        return replica_kills.main(argv[1:])
    if argv[:1] == ["eos-kills"]:  # its own options: bench/eos_kills.py
        from bench import eos_kills

        return eos_kills.main(argv[1:])
    ap = argparse.ArgumentParser(
        prog="python -m bench", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = ap.add_subparsers(dest="command", required=True)
    for name, study in studies.STUDIES.items():
        p = sub.add_parser(
            name,
            help=f"vary {study.variable.replace('_', ' ')} over {', '.join(map(str, study.values))}",
            description=f"The {name} study: {study.variable} in {study.values}, fixed {study.fixed}.",
        )
        p.add_argument(
            "--quick",
            action="store_true",
            help="one repetition, 1 s warm-up + 2 s window, two values, small consume runs",
        )
        p.add_argument("--repetitions", type=int, default=3, help="repetitions per cell (default 3)")
        p.add_argument("--warmup", type=int, default=3, help="seconds measured but not averaged (default 3)")
        p.add_argument("--window", type=int, default=10, help="seconds averaged per measurement (default 10)")
        p.add_argument(
            "--kafka-bootstrap",
            metavar="HOST:PORT",
            help="use this Kafka-compatible broker as the reference instead of starting Tansu",
        )
        p.add_argument("--no-consume", action="store_true", help="skip the consumer matrix")
        p.add_argument("--no-latency", action="store_true", help="skip the end-to-end latency runs")
        p.add_argument(
            "--consume-records",
            type=int,
            default=studies.RunConfig.consume_records,
            help="messages per consume measurement (default 300000; capped at 200 MB of values)",
        )
        p.add_argument("--latency-rate", type=int, default=2000, help="messages/s of the latency runs")
        p.add_argument("--linger-ms", type=int, default=5, help="producers' linger.ms (default 5)")
        p.add_argument("--out", type=Path, help="results folder (default bench/results/<study>-<date>)")
        p.add_argument("--append", action="store_true", help="add to an existing samples.jsonl")
        p.add_argument("--spark-master", help="Spark master URL (default local[*])")
    rel = sub.add_parser(
        "reliability",
        help="loss and duplicate rates under faults (TRAK, rAck, and crash/stall/reset runs)",
        description=reliability_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    rel.add_argument(
        "matrix",
        choices=("trak", "rack", "faults", "quick"),
        help="trak: loss 1-10 %% / delay 1-300 ms whole run; rack: loss 0-9 %% whole run, "
        "delay 100-300 ms mid-run, with a rAck row (hmb_client, acks=-2); faults: stall, resets, "
        "broker kill -9; quick: the suite's version",
    )
    rel.add_argument("--records", type=int, help="messages per run (default 100000; quick: 3000)")
    rel.add_argument("--repetitions", type=int, default=1, help="runs per cell (default 1)")
    rel.add_argument("--clients", default="hmb,librdkafka", help="comma list of hmb, librdkafka")
    rel.add_argument(
        "--rate", type=float, default=5000.0, help="msg/s pacing of runs with a mid-run window (default 5000)"
    )
    rel.add_argument("--delivery-timeout", type=float, default=120.0, help="producers' delivery timeout, s")
    rel.add_argument(
        "--out", type=Path, help="results folder (default bench/results/reliability-<matrix>-<date>)"
    )
    rel.add_argument("--append", action="store_true", help="add to an existing outcomes.jsonl")
    rel.add_argument(
        "--resume",
        action="store_true",
        help="continue an interrupted matrix in --out: runs that already have a row are not run again",
    )
    rel.add_argument(
        "--faults",
        metavar="KIND[,KIND]",
        help="run only the cells with these fault kinds (none, loss, delay, stall, reset, kill, partition); "
        "with --append their earlier rows are replaced, to rerun part of a matrix",
    )
    rel.add_argument(
        "--cluster",
        type=int,
        default=0,
        metavar="BROKERS",
        help="run every cell on ZooKeeper and this many brokers (3: the papers' cluster), a topic with "
        "3 partitions at RF=3; kill and partition hit the leader of the partition being written",
    )
    rel.add_argument("--semantics", metavar="NAME[,NAME]", help="only these rows (e.g. rack,at-most-once)")
    rel.add_argument("--spark-master", help="Spark master URL (default local[*])")
    sub.add_parser("scale", help="cost against partitions and connections, hmb and Tansu (bench/scale.py)")
    r = sub.add_parser("report", help="aggregate samples.jsonl / outcomes.jsonl of a results folder again")
    r.add_argument("out", type=Path, help="results folder holding samples.jsonl or outcomes.jsonl")
    r.add_argument("--spark-master", help="Spark master URL (default local[*])")
    args = ap.parse_args(argv)
    if args.command == "report":
        return report(args.out, args.spark_master)
    if args.command == "reliability":
        return run_reliability(args)
    return run_study(args.command, args)


if __name__ == "__main__":
    sys.exit(main())
