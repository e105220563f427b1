"""The load run's report: Markdown with the figures, and a PNG of RSS and throughput over time.

Kept apart from :mod:`bench.load` (which runs the load) so each stays small.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from bench.load import LoadResult
from bench.studies import machine_info


def _plot(result: LoadResult, png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(9, 6), sharex=True)
    ax1.plot([t for t, _ in result.rss], [b / 2**20 for _, b in result.rss], label="broker RSS (MiB)")
    ax1.set_ylabel("MiB")
    ax1.set_ylim(bottom=0)
    ax1.axvline(result.config.duration / 3, color="grey", ls="--", lw=0.8)
    ax1.legend(loc="lower right")
    ax1.set_title(
        f"hmb under load: {result.config.connections} idle connections, {result.config.producers} "
        f"producers, {result.config.consumers} consumers ({result.config.slow} slow from the dashed line)"
    )
    per_sec: dict[int, int] = {}
    for p in result.producers:
        for s, n in p["per_second"].items():
            per_sec[int(s)] = per_sec.get(int(s), 0) + n
    secs = sorted(per_sec)
    ax2.plot(secs, [per_sec[s] for s in secs], label="records acknowledged / s")
    ax2.plot([t for t, _ in result.fds], [n for _, n in result.fds], label="broker open descriptors")
    ax2.set_xlabel("seconds since the producers started")
    ax2.set_ylim(bottom=0)
    ax2.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(png, dpi=100)
    plt.close(fig)


def report(result: LoadResult, md: Path, command: str) -> None:
    cfg = result.config
    png = md.with_suffix(".png")
    _plot(result, png)
    rss = [b for _, b in result.rss]
    mib = [f"{b / 2**20:.0f}" for b in rss]
    v = result.verify
    errors = result.errors
    lines = [
        f"# Load: {cfg.connections} connections, {cfg.producers} idempotent producers, "
        f"{cfg.consumers} consumers, {cfg.duration:.0f} s",
        "",
        f"- Date: {result.started}",
        f"- Machine: {machine_info()}",
        f"- Command: `{command}`",
        f"- Load average (1 min) during the run: {min(x for _, x in result.loadavg):.1f} to "
        f"{max(x for _, x in result.loadavg):.1f} (2 shared cores: other work ran on the machine)"
        if result.loadavg
        else "- Load average: not sampled",
        f"- Topic `{cfg.topic}`: {cfg.partitions} partitions; producer i writes partition i mod "
        f"{cfg.partitions} at {cfg.rate:g} records/s of {cfg.size} bytes (acks=all, idempotent, "
        f"linger 5 ms) in {cfg.producer_procs} processes; consumer j reads partition j mod {cfg.partitions} "
        f"in {cfg.consumer_procs} processes; slow consumers on partitions {sorted(cfg.slow_partitions())} "
        f"read {cfg.slow_rate:g} records/s from t = {cfg.duration / 3:.0f} s (phase B).",
        "",
        "## Verdict",
        "",
        "| check | result |",
        "|---|---|",
        f"| records acknowledged | {result.acked:,} of {sum(p['sent'] for p in result.producers):,} sent |",
        f"| read back from offset 0 | {v.get('records', 0):,} "
        f"(log end offsets sum {v.get('log_end_total', 0):,}) |",
        f"| lost (acknowledged, not in the log) | {v.get('lost')} |",
        f"| duplicates | {v.get('duplicates')} |",
        f"| out of per-producer order | {v.get('out_of_order')} |",
        f"| consumers: out of order on the fly | {sum(c.get('out_of_order', 0) for c in result.consumers)} |",
        f"| errors (clients, idle connections, broker log) | {len(errors)} |",
        f"| idle connections open / requests answered | {result.idle.get('open_peak')} / "
        f"{result.idle.get('requests', 0):,} (slowest answer {result.idle.get('max_latency_s', 0):.2f} s) |",
        f"| broker RSS min / max / last (MiB) | {min(mib, key=float) if mib else '-'} / "
        f"{max(mib, key=float) if mib else '-'} / {mib[-1] if mib else '-'} |",
        f"| broker open descriptors max | {max((n for _, n in result.fds), default=0)} |",
        "",
    ]
    if errors:
        lines += ["Errors (first 20):", "", *[f"- `{e}`" for e in errors[:20]], ""]
    a_fast, b_fast, b_slow = (
        result.phase_stats("A", False),
        result.phase_stats("B", False),
        result.phase_stats("B", True),
    )
    lines += [
        "## Slow consumers and producers on other partitions",
        "",
        "Producers run open loop at a fixed target rate, so a broker held up by slow consumers "
        "would show as a lower achieved rate or a higher acknowledgement latency.  Phase A "
        f"(0-{cfg.duration / 3:.0f} s): every consumer keeps up.  Phase B: the slow consumers read "
        f"{cfg.slow_rate:g} records/s of the {cfg.rate:g} produced, fall behind and fetch ever older data.",
        "",
        "| producers | phase | n | achieved records/s (target) | ack p50 ms | ack p99 ms (worst) |",
        "|---|---|---|---|---|---|",
    ]
    for name, phase, s in (
        ("partitions without a slow consumer", "A", a_fast),
        ("partitions without a slow consumer", "B", b_fast),
        ("partitions of the slow consumers", "B", b_slow),
    ):
        if s:
            lines.append(
                f"| {name} | {phase} | {s['producers']:.0f} | {s['rate']:.1f} ({cfg.rate:g}) | "
                f"{s['p50_ms']:.1f} | {s['p99_ms']:.1f} |"
            )
    slow_c = [c for c in result.consumers if c.get("slow")]
    if slow_c:
        lines += [
            "",
            f"Slow consumers at the end: lag {', '.join(str(c.get('lag')) for c in slow_c)} records; "
            f"the others: max lag {max((c.get('lag') or 0) for c in result.consumers if not c.get('slow'))}.",
        ]
    lines += ["", "## Broker RSS over time", "", f"![RSS over time]({png.name})", "", "| t (s) | RSS MiB |"]
    lines += ["|---|---|"]
    step = max(1, len(result.rss) // 20)
    lines += [f"| {t:.0f} | {b / 2**20:.0f} |" for t, b in result.rss[::step]]
    md.write_text("\n".join(lines) + "\n")
    (md.with_suffix(".json")).write_text(
        json.dumps(
            {
                "config": asdict(cfg),
                "rss": result.rss,
                "fds": result.fds,
                "loadavg": result.loadavg,
                "verify": v,
                "errors": errors,
                "phases": {"A_other": a_fast, "B_other": b_fast, "B_slow": b_slow},
                "idle": result.idle,
            }
        )
    )
