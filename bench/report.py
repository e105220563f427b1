"""Aggregate the samples with PySpark and render tables and plots.

The samples (one row per second per measurement, :class:`bench.studies.Sample`)
arrive as JSON lines; Spark reads them with a fixed schema, stores them as
Parquet next to the report, and computes per study, role, scenario and
value: mean, standard deviation and median of the per-second throughput
(warm-up seconds excluded), the ratio hmb / reference broker for the same
client, and a join with the thesis's published figures.  Latency rows give
p50/p99 per scenario.  Only the small aggregates come back to the driver,
where Markdown tables (shaped like the thesis's Tables 10.3 and 10.5) and
PNG plots (matplotlib, headless) are written.

Spark runs ``local[*]`` unless ``--spark-master`` names a cluster; the
job is the same either way.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import thesis

SCHEMA = (
    "study STRING, role STRING, scenario STRING, producer STRING, broker STRING, variable STRING, "
    "value BIGINT, repetition INT, second INT, warmup BOOLEAN, bytes BIGINT, messages BIGINT, "
    "latency_ms DOUBLE, duration_s DOUBLE, machine STRING, run_at STRING"
)


@dataclass
class Aggregates:
    throughput: list[dict[str, Any]]  # study, role, scenario, value, mb_mean, mb_sd, mb_median, msg_mean, ...
    latency: list[dict[str, Any]]  # scenario, p50_ms, p99_ms, count
    machine: str
    run_at: str


def spark_session(master: str | None = None) -> Any:
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    return (
        SparkSession.builder.master(master or "local[*]")
        .appName("hmb-bench")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.driver.memory", "2g")
        .getOrCreate()
    )


def aggregate(samples_jsonl: Path, parquet_dir: Path, master: str | None = None) -> Aggregates:
    """Samples -> Parquet -> aggregates, all in Spark."""
    from pyspark.sql import functions as F  # noqa: N812 - Spark's convention

    spark = spark_session(master)
    spark.sparkContext.setLogLevel("ERROR")
    try:
        raw = spark.read.schema(SCHEMA).json(str(samples_jsonl))
        raw.write.mode("overwrite").parquet(str(parquet_dir))
        df = spark.read.parquet(str(parquet_dir))
        meta = df.select("machine", "run_at").orderBy("run_at").first()
        # Rates per sample; samples may be shorter than a second (consume) and the
        # last one partial, so means are totals over time, spreads over samples.
        window = (
            df.where(~F.col("warmup") & (F.col("role") != "latency"))
            .withColumn("duration", F.coalesce(F.col("duration_s"), F.lit(1.0)))
            .withColumn("mb_s", F.col("bytes") / 1e6 / F.col("duration"))
            .withColumn("msg_s", F.col("messages") / F.col("duration"))
        )
        tp = (
            window.groupBy("study", "role", "scenario", "producer", "broker", "variable", "value")
            .agg(
                (F.sum("bytes") / 1e6 / F.sum("duration")).alias("mb_mean"),
                F.stddev("mb_s").alias("mb_sd"),
                F.percentile_approx("mb_s", 0.5).alias("mb_median"),
                (F.sum("messages") / F.sum("duration")).alias("msg_mean"),
                F.stddev("msg_s").alias("msg_sd"),
                F.percentile_approx("msg_s", 0.5).alias("msg_median"),
                F.countDistinct("repetition").alias("repetitions"),
                F.count("*").alias("seconds"),
            )
            .withColumn("scenario_no", F.substring("scenario", 2, 1).cast("int"))
        )
        # The same client against the reference broker: S2/S1 and S4/S3.
        ref = tp.where(F.col("broker") != "hmb").select(
            "study",
            "role",
            "producer",
            "value",
            F.col("mb_mean").alias("ref_mb"),
            F.col("msg_mean").alias("ref_msg"),
        )
        tp = tp.join(ref, ["study", "role", "producer", "value"], "left").withColumn(
            "ratio_vs_reference", F.col("msg_mean") / F.col("ref_msg")
        )
        published = spark.createDataFrame(
            thesis.rows(), "study STRING, value BIGINT, scenario_no INT, thesis_mb DOUBLE"
        )
        tp = tp.join(
            published.withColumn("role", F.lit("produce")), ["study", "role", "value", "scenario_no"], "left"
        ).withColumn("ratio_vs_thesis", F.col("mb_mean") / F.col("thesis_mb"))
        lat = (
            df.where((F.col("role") == "latency") & ~F.col("warmup"))
            .groupBy("scenario", "producer", "broker")
            .agg(
                F.percentile_approx("latency_ms", 0.5, 10000).alias("p50_ms"),
                F.percentile_approx("latency_ms", 0.99, 10000).alias("p99_ms"),
                F.count("*").alias("count"),
            )
        )
        return Aggregates(
            [r.asDict() for r in tp.orderBy("study", "role", "value", "scenario").collect()],
            [r.asDict() for r in lat.orderBy("scenario").collect()],
            meta["machine"] if meta else "",
            meta["run_at"] if meta else "",
        )
    finally:
        spark.stop()


def per_second(samples_jsonl: Path) -> list[dict[str, Any]]:
    """The raw per-second rows of repetition 0 for the time-series plots (small: read directly)."""
    import json

    out = []
    with samples_jsonl.open() as f:
        for line in f:
            row = json.loads(line)
            if row["role"] != "latency" and row["repetition"] == 0:
                out.append(row)
    return out


# ---------------------------------------------------------------- rendering


def _fmt(mean: Any, sd: Any) -> str:
    if not isinstance(mean, float | int):
        return "-"
    return f"{mean:.1f} ± {sd:.1f}" if sd is not None else f"{mean:.1f}"


def markdown(agg: Aggregates) -> str:
    lines = [f"Machine: {agg.machine}. Run: {agg.run_at}.", ""]
    for study, (table_name, published) in thesis.TABLES.items():
        rows = [r for r in agg.throughput if r["study"] == study]
        if not rows:
            continue
        variable = rows[0]["variable"].replace("_", " ")
        for role in ("produce", "consume"):
            cells = {(r["value"], r["scenario_no"]): r for r in rows if r["role"] == role}
            if not cells:
                continue
            values = sorted({v for v, _ in cells})
            what = "producer" if role == "produce" else "consumer"
            lines += [
                f"### {study}: {role} ({table_name} shape), TCP MB/s of the {what}'s connection, mean ± sd",
                "",
            ]
            letter = "S" if role == "produce" else "C"
            head = f"| {variable} B | " + " | ".join(f"{letter}{s}" for s in range(1, 5))
            if role == "produce":
                head += (
                    " | " + " | ".join(f"thesis S{s}" for s in range(1, 5)) + " | S2/S1 msg/s | S4/S3 msg/s"
                    " | S2/thesis S2 | S4/thesis S4"
                )
            else:
                head += " | C2/C1 msg/s | C4/C3 msg/s"
            lines += [head + " |", "|" + "---|" * (head.count("|"))]
            for v in values:
                mbs = [cells.get((v, s)) for s in range(1, 5)]
                line = f"| {v} | " + " | ".join(_fmt(c and c["mb_mean"], c and c["mb_sd"]) for c in mbs)
                if role == "produce":
                    pub = published.get(v)
                    line += " | " + " | ".join(f"{x:g}" for x in pub) if pub else " | - | - | - | -"
                ratios = [
                    c["ratio_vs_reference"] if c and c["ratio_vs_reference"] else None
                    for c in (mbs[1], mbs[3])
                ]
                if role == "produce":  # ours against the thesis's HMB, same scenario, MB/s
                    ratios += [
                        c["mb_mean"] / pub[i] if c and pub and pub[i] else None
                        for c, i in ((mbs[1], 1), (mbs[3], 3))
                    ]
                line += " | " + " | ".join(f"{x:.2f}" if x else "-" for x in ratios) + " |"
                lines.append(line)
            lines.append("")
            lines.append(
                "Messages/s (mean): "
                + "; ".join(
                    f"{v} B: "
                    + ", ".join(
                        f"{letter}{s} {cells[(v, s)]['msg_mean']:,.0f}"
                        for s in range(1, 5)
                        if (v, s) in cells
                    )
                    for v in values
                )
            )
            lines.append("")
    if agg.latency:
        lines += ["### End-to-end latency (produce -> consume, one client family)", ""]
        lines += ["| scenario | p50 ms | p99 ms | messages |", "|---|---:|---:|---:|"]
        for r in agg.latency:
            lines.append(f"| {r['scenario']} | {r['p50_ms']:.1f} | {r['p99_ms']:.1f} | {r['count']:,} |")
        lines.append("")
    return "\n".join(lines)


def plots(agg: Aggregates, seconds: list[dict[str, Any]], out_dir: Path) -> list[Path]:
    """Throughput vs the study's variable (one line per scenario, error bars, thesis dashed)
    and per-second time series per cell."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    out_dir.mkdir(parents=True, exist_ok=True)
    colours = {1: "tab:blue", 2: "tab:orange", 3: "tab:green", 4: "tab:red"}
    for study, (table_name, published) in thesis.TABLES.items():
        for role in ("produce", "consume"):
            rows = [r for r in agg.throughput if r["study"] == study and r["role"] == role]
            if not rows:
                continue
            fig, ax = plt.subplots(figsize=(8, 5))
            for s in range(1, 5):
                pts = sorted(
                    (r["value"], r["mb_mean"], r["mb_sd"] or 0.0, r["scenario"])
                    for r in rows
                    if r["scenario_no"] == s
                )
                if not pts:
                    continue
                xs, ys, sds, names = zip(*pts, strict=True)
                label = (
                    names[0]
                    if role == "produce"
                    else names[0].replace("producer", "consumer").replace("S", "C", 1)
                )
                ax.errorbar(xs, ys, yerr=sds, marker="o", capsize=3, color=colours[s], label=label)
                if role == "produce":
                    tx = sorted(published)
                    ax.plot(
                        tx,
                        [published[x][s - 1] for x in tx],
                        linestyle="--",
                        color=colours[s],
                        alpha=0.5,
                        label=f"thesis S{s}",
                    )
            ax.set_xscale("log")
            ax.set_xlabel(rows[0]["variable"].replace("_", " ") + " (bytes)")
            ax.set_ylabel("TCP throughput (MB/s)")
            ax.set_title(f"{study} study, {role} ({table_name} shape)")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=7, ncol=2)
            path = out_dir / f"{study}-{role}.png"
            fig.tight_layout()
            fig.savefig(path, dpi=110)
            plt.close(fig)
            written.append(path)
            # per-second series, repetition 0, one panel per value
            series = [r for r in seconds if r["study"] == study and r["role"] == role]
            values = sorted({r["value"] for r in series})
            if not values:
                continue
            fig, axes = plt.subplots(
                1, len(values), figsize=(3.2 * len(values), 3.2), squeeze=False, sharey=True
            )
            for ax, v in zip(axes[0], values, strict=True):
                for s in range(1, 5):
                    trace = sorted(
                        (r["second"], r["bytes"] / 1e6)
                        for r in series
                        if r["value"] == v and r["scenario"].startswith(f"S{s} ")
                    )
                    if trace:
                        ax.plot(*zip(*trace, strict=True), color=colours[s], label=f"S{s}")
                ax.set_title(f"{v} B", fontsize=9)
                ax.set_xlabel("second")
                ax.grid(True, alpha=0.3)
            axes[0][0].set_ylabel("MB/s")
            axes[0][-1].legend(fontsize=7)
            fig.suptitle(f"{study}, {role}: per-second throughput (repetition 1)", fontsize=10)
            path = out_dir / f"{study}-{role}-per-second.png"
            fig.tight_layout()
            fig.savefig(path, dpi=100)
            plt.close(fig)
            written.append(path)
    return written


def render(samples_jsonl: Path, out_dir: Path, master: str | None = None) -> tuple[Path, list[Path]]:
    """Aggregate and write ``report.md`` and the PNGs into ``out_dir``."""
    agg = aggregate(samples_jsonl, out_dir / "samples.parquet", master)
    md = out_dir / "report.md"
    md.write_text(markdown(agg))
    return md, plots(agg, per_second(samples_jsonl), out_dir)


# ---------------------------------------------------------------- reliability studies

RELIABILITY_SCHEMA = (
    "study STRING, client STRING, semantics STRING, acks INT, idempotent BOOLEAN, fault STRING, "
    "fault_kind STRING, fault_value DOUBLE, windowed BOOLEAN, message_size INT, repetition INT, n BIGINT, "
    "acked BIGINT, failed BIGINT, m BIGINT, m_distinct BIGINT, loss_rate DOUBLE, dup_rate DOUBLE, "
    "dup_ids BIGINT, lost_acked BIGINT, throughput_msg_s DOUBLE, elapsed_s DOUBLE, ack_p50_ms DOUBLE, "
    "ack_p95_ms DOUBLE, ack_p99_ms DOUBLE, machine STRING, run_at STRING, published STRING, "
    "cluster INT, partitions INT, min_isr INT, leader_changes BIGINT, retries BIGINT"
)


#: what makes a cell of the reliability tables
CELL = ("study", "cluster", "client", "semantics", "fault", "fault_kind", "fault_value", "message_size")


def aggregate_reliability(outcomes_jsonl: Path, parquet_dir: Path, master: str | None = None) -> Aggregates:
    """Runs -> Parquet -> per cell (study, cluster, client, semantics, fault, size): mean loss
    and duplicate rates over the repetitions, totals of duplicated ids and of acknowledged
    messages lost, throughput and acknowledgement latency; on a cluster also the leader
    changes and the producer's retries (rAck: resends) summed over the runs.  Runs recorded
    before the cluster columns existed count as one broker (``cluster`` 0)."""
    from pyspark.sql import functions as F  # noqa: N812 - Spark's convention

    spark = spark_session(master)
    spark.sparkContext.setLogLevel("ERROR")
    try:
        spark.read.schema(RELIABILITY_SCHEMA).json(str(outcomes_jsonl)).write.mode("overwrite").parquet(
            str(parquet_dir)
        )
        df = spark.read.parquet(str(parquet_dir)).withColumn(
            "cluster", F.coalesce(F.col("cluster"), F.lit(0))
        )
        meta = df.select("machine", "run_at").orderBy("run_at").first()
        cells = (
            df.groupBy(
                "study",
                "cluster",
                "client",
                "semantics",
                "fault",
                "fault_kind",
                "fault_value",
                "message_size",
            )
            .agg(
                F.count("*").alias("runs"),
                F.sum("n").alias("n"),
                F.sum("m").alias("m"),
                F.sum("m_distinct").alias("m_distinct"),
                F.mean(F.col("loss_rate") * 100).alias("alpha_pct"),
                F.mean(F.col("dup_rate") * 100).alias("beta_pct"),
                F.sum("dup_ids").alias("dup_ids"),
                F.sum("lost_acked").alias("lost_acked"),
                F.mean("throughput_msg_s").alias("msg_s"),
                F.mean("elapsed_s").alias("elapsed_s"),
                F.mean("ack_p50_ms").alias("p50_ms"),
                F.mean("ack_p95_ms").alias("p95_ms"),
                F.mean("ack_p99_ms").alias("p99_ms"),
                F.max("published").alias("published"),
                F.max("min_isr").alias("min_isr"),
                F.sum("leader_changes").alias("leader_changes"),
                F.sum("retries").alias("retries"),
            )
            .orderBy("study", "fault_kind", "fault_value", "message_size", "semantics", "client")
        )
        return Aggregates(
            [r.asDict() for r in cells.collect()],
            [],
            meta["machine"] if meta else "",
            meta["run_at"] if meta else "",
        )
    finally:
        spark.stop()


def reliability_markdown(agg: Aggregates, skipped: Sequence[dict[str, str]] = ()) -> str:
    """One table per study and cluster size; a cluster's tables add its min.insync.replicas,
    the leader changes and the producer's retries; rows left out are listed with the reason."""
    lines = [f"Machine: {agg.machine}. Run: {agg.run_at}.", ""]
    for study, cluster in sorted({(r["study"], r["cluster"] or 0) for r in agg.throughput}):
        rows = [r for r in agg.throughput if r["study"] == study and (r["cluster"] or 0) == cluster]
        where = f", {cluster} brokers, min.insync.replicas {rows[0]['min_isr']}" if cluster else ""
        extra_head, extra_rule = (" leader changes | retries |", "---:|---:|") if cluster else ("", "")
        lines += [
            f"### {study}{where}",
            "",
            "| fault | size B | semantics | client | runs | N | M | M' | loss α % | dup β % | dup ids "  # noqa: RUF001
            f"| acked lost | msg/s | ack p50/p95/p99 ms |{extra_head} published |",
            f"|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|{extra_rule}---|",
        ]
        for r in rows:
            lat = "/".join(f"{r[k]:.0f}" if r[k] is not None else "-" for k in ("p50_ms", "p95_ms", "p99_ms"))
            extra = ""
            if cluster:
                retries = "-" if r["retries"] is None else f"{r['retries']:,}"
                extra = f" {r['leader_changes'] or 0} | {retries} |"
            lines.append(
                f"| {r['fault']} | {r['message_size']} | {r['semantics']} | {r['client']} | {r['runs']} "
                f"| {r['n']:,} | {r['m']:,} | {r['m_distinct']:,} "
                f"| {r['alpha_pct']:.4f} | {r['beta_pct']:.4f} "
                f"| {r['dup_ids']} | {r['lost_acked']} | {r['msg_s']:,.0f} | {lat} |{extra} "
                f"{r['published'] or ''} |"
            )
        lines.append("")
    for reason in sorted({s["reason"] for s in skipped}):
        rows_out = sorted({s["semantics"] for s in skipped if s["reason"] == reason})
        lines += [f"Not run ({', '.join(rows_out)}): {reason}", ""]
    return "\n".join(lines)


#: Loss rates the papers published, in percent, drawn beside ours:
#: (study, semantics, fault kind, fault value) -> alpha %.
PUBLISHED_ALPHA = {
    ("trak", "at-most-once", "loss", 10.0): 0.283,
    ("trak", "at-least-once-acks1", "loss", 10.0): 0.0038,
    ("trak", "at-least-once-acksall", "loss", 10.0): 0.0038,
    ("rack", "at-most-once", "loss", 6.0): 0.038,
    ("rack", "at-most-once", "loss", 9.0): 0.206,
}


def reliability_plots(agg: Aggregates, out_dir: Path) -> list[Path]:
    """Per study and fault kind: loss rate, duplicate rate and producer throughput against
    the fault's size, one row per message size, one line per semantics and client; the
    papers' published loss rates as black crosses."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    for study, cluster in sorted({(r["study"], r["cluster"] or 0) for r in agg.throughput}):
        for kind in ("loss", "delay"):
            rows = [
                r
                for r in agg.throughput
                if r["study"] == study
                and (r["cluster"] or 0) == cluster
                and r["fault_kind"] in (kind, "none")
            ]
            if not any(r["fault_kind"] == kind for r in rows):
                continue
            sizes = sorted({r["message_size"] for r in rows})
            fig, grid = plt.subplots(len(sizes), 3, figsize=(15, 4 * len(sizes)), squeeze=False)
            for axes, size in zip(grid, sizes, strict=True):
                cells = [r for r in rows if r["message_size"] == size]
                series = sorted({(r["semantics"], r["client"]) for r in cells})
                for (sem, client), marker in zip(series, "osD^v<>ph*", strict=False):
                    pts = sorted(
                        (r["fault_value"], r["alpha_pct"], r["beta_pct"], r["msg_s"])
                        for r in cells
                        if r["semantics"] == sem and r["client"] == client
                    )
                    xs = [p[0] for p in pts]
                    for ax, i in zip(axes, (1, 2, 3), strict=True):
                        ax.plot(xs, [p[i] for p in pts], marker=marker, label=f"{sem} ({client})")
                published = [
                    (v, a) for (st, _, k, v), a in PUBLISHED_ALPHA.items() if st == study and k == kind
                ]
                if published:
                    xs, alphas = [v for v, _ in published], [a for _, a in published]
                    axes[0].scatter(xs, alphas, marker="x", color="black", s=60, label="published", zorder=5)
                unit = "packet loss %" if kind == "loss" else "delay ms"
                labels = ("loss rate α %", "duplicate rate β %", "producer msg/s")  # noqa: RUF001
                for ax, what in zip(axes, labels, strict=True):
                    ax.set_xlabel(unit)
                    ax.set_ylabel(what)
                    ax.set_title(f"{size} B messages", fontsize=9)
                    ax.grid(True, alpha=0.3)
                axes[2].set_yscale("log")
                axes[2].legend(fontsize=7)
                if published:
                    axes[0].legend(fontsize=7)
            on = f", {cluster} brokers" if cluster else ""
            fig.suptitle(f"{study}: delivery under {kind}{on}")
            fig.tight_layout()
            path = out_dir / f"reliability-{study}{f'-cluster{cluster}' if cluster else ''}-{kind}.png"
            fig.savefig(path, dpi=90)
            plt.close(fig)
            written.append(path)
    return written


def render_reliability(
    outcomes_jsonl: Path, out_dir: Path, master: str | None = None
) -> tuple[Path, list[Path]]:
    agg = aggregate_reliability(outcomes_jsonl, out_dir / "outcomes.parquet", master)
    md = out_dir / "report.md"
    skipped_jsonl = out_dir / "skipped.jsonl"
    skipped = (
        [json.loads(x) for x in skipped_jsonl.read_text().splitlines()] if skipped_jsonl.exists() else []
    )
    md.write_text(reliability_markdown(agg, skipped))
    return md, reliability_plots(agg, out_dir)
