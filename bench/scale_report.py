"""The rows ``python -m bench scale`` measures, and its report: a Markdown table and a log-log plot.

Kept apart from the measuring (:mod:`bench.scale`), which needs brokers and
sockets; these need only the rows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class PartitionRow:
    kind: str
    partitions: int
    create_s: float = 0.0
    create_cpu_s: float = 0.0
    # hmb: ms to make a directory of three empty files beside its data dir just before
    # creating, the file system's share of a create figure (it moves from run to run)
    fs_ms_per_dir: float | None = None
    last_over_first: float = 0.0  # cost per partition of the last 500 / of the first 500
    produce_s: float = 0.0
    consume_s: float = 0.0
    consumed: int = 0  # records read back within the limit (``partitions`` when all came)
    rss_mb: float = 0.0
    rss_idle_mb: float = 0.0  # before any topic: what the partitions add is the difference
    disk_running_mb: float | None = None
    disk_mb: float | None = None
    restart_s: float | None = None
    empty_start_s: float | None = None


@dataclass
class ConnectionRow:
    kind: str
    connections: int
    open_cpu_ms_per_conn: float = 0.0
    idle_cpu_us_per_conn_s: float = 0.0
    rss_kb_per_conn: float = 0.0
    producing: int = 0
    produce_cpu_s: float = 0.0
    p99_unloaded_ms: float = 0.0  # paced probe connections: the clients that are not the load
    p99_loaded_ms: float = 0.0
    closed_p99_unloaded_ms: float = 0.0  # one closed-loop probe connection: itself a busy client
    closed_p99_loaded_ms: float = 0.0
    p50_unloaded_ms: float = 0.0  # paced probes' median: the tail above is often the kernel's
    p50_loaded_ms: float = 0.0
    produce_runq_wait_s: float = 0.0  # the broker runnable but waiting for a CPU while loaded
    extra: dict = field(default_factory=dict)


def _ratio(h: float | None, t: float | None) -> str:
    if h is None or t is None or t == 0:
        return "—"
    return f"{h / t:.2f}"


def _fmt(v: float | None, spec: str = ".2f") -> str:
    return "—" if v is None else format(v, spec)


Cell = tuple[str, float | None, float | None]  # a table line: what, hmb's figure, Tansu's


def _same(h: object, t: object | None, label: str, attr: str) -> Cell:
    """A line whose figure is the same attribute of both brokers' rows."""
    return label, getattr(h, attr), getattr(t, attr) if t is not None else None


def _partition_cells(n: int, h: PartitionRow, t: PartitionRow | None) -> list[Cell]:
    return [
        _same(h, t, "create, s", "create_s"),
        _same(h, t, "create, broker CPU s", "create_cpu_s"),
        ("file system before create: ms per directory of three files", h.fs_ms_per_dir, None),
        _same(h, t, "create: last 500 / first 500, per partition", "last_over_first"),
        _same(h, t, "one record to each partition, s", "produce_s"),
        _same(h, t, "one record from each partition, s", "consume_s"),
        _same(h, t, "records read back (of one per partition)", "consumed"),
        _same(h, t, "RSS, MB", "rss_mb"),
        (
            "RSS per partition, KB",
            (h.rss_mb - h.rss_idle_mb) * 1000 / n,
            (t.rss_mb - t.rss_idle_mb) * 1000 / n if t else None,
        ),
        ("disk while running (allocated blocks), MB", h.disk_running_mb, None),
        ("disk after a clean stop, MB", h.disk_mb, None),
        ("restart to first Metadata, s", h.restart_s, None),
        ("start of an empty data dir, s", h.empty_start_s, None),
        ("restart / empty start", (h.restart_s or 0) / (h.empty_start_s or 1), None),
    ]


_CONNECTION_CELLS = (
    ("broker CPU per connection opened, ms", "open_cpu_ms_per_conn"),
    ("broker CPU per idle connection, µs/s", "idle_cpu_us_per_conn_s"),
    ("RSS per connection, KB", "rss_kb_per_conn"),
    ("{producing} producing: broker CPU s", "produce_cpu_s"),
    ("{producing} producing: broker waiting for a CPU, s", "produce_runq_wait_s"),
    ("paced probes: p50 unloaded, ms", "p50_unloaded_ms"),
    ("paced probes: p50 with {producing} producing, ms", "p50_loaded_ms"),
    ("paced probes: p99 unloaded, ms", "p99_unloaded_ms"),
    ("paced probes: p99 with {producing} producing, ms", "p99_loaded_ms"),
    ("closed-loop probe: p99 unloaded, ms", "closed_p99_unloaded_ms"),
    ("closed-loop probe: p99 with {producing} producing, ms", "closed_p99_loaded_ms"),
)
"""The connections table: a label (``{producing}``: how many produced) and the rows' attribute."""


def _connection_cells(n: int, h: ConnectionRow, t: ConnectionRow | None) -> list[Cell]:
    producing = f"{h.producing:,}"
    return [_same(h, t, label.format(producing=producing), attr) for label, attr in _CONNECTION_CELLS]


def _table(size: str, rows: list[Any], cells: Callable[[int, Any, Any], list[Cell]]) -> list[str]:
    """hmb beside Tansu for every size measured, ``size`` being the rows' attribute that holds it."""
    lines = [f"| {size} | work | hmb | Tansu | hmb/Tansu |", "|---:|---|---:|---:|---:|"]
    by = {(r.kind, getattr(r, size)): r for r in rows}
    for n in sorted({getattr(r, size) for r in rows}):
        h, t = by.get(("hmb", n)), by.get(("tansu", n))
        if h is None:
            continue
        lines += [
            f"| {n:,} | {name} | {_fmt(hv)} | {_fmt(tv)} | {_ratio(hv, tv)} |"
            for name, hv, tv in cells(n, h, t)
        ]
    return lines


def render(parts: list[PartitionRow], conns: list[ConnectionRow], header: str) -> str:
    lines = [header]
    if parts:
        lines += ["", "## Partitions", "", *_table("partitions", parts, _partition_cells)]
    if conns:
        lines += ["", "## Connections", "", *_table("connections", conns, _connection_cells)]
    return "\n".join(lines) + "\n"


def plot(parts: list[PartitionRow], conns: list[ConnectionRow], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 5))
    for kind, style in (("hmb", "-"), ("tansu", "--")):
        prows = sorted((r for r in parts if r.kind == kind), key=lambda r: r.partitions)
        xs = [r.partitions for r in prows]
        for attr, colour in (
            ("create_s", "C0"),
            ("produce_s", "C1"),
            ("consume_s", "C2"),
            ("restart_s", "C3"),
        ):
            ys = [getattr(r, attr) for r in prows]
            if ys and all(ys):
                left.plot(xs, ys, style, color=colour, marker="o", label=f"{kind} {attr[:-2]}")
        crows = sorted((r for r in conns if r.kind == kind), key=lambda r: r.connections)
        if crows:
            cx = [r.connections for r in crows]
            opened = [r.open_cpu_ms_per_conn * r.connections / 1000 for r in crows]
            idle = [max(1e-6, r.idle_cpu_us_per_conn_s * r.connections / 1e6) for r in crows]
            right.plot(cx, opened, style, color="C0", marker="o", label=f"{kind} CPU to open them, s")
            right.plot(cx, idle, style, color="C1", marker="o", label=f"{kind} idle CPU, s per s")
    left.set(
        xscale="log", yscale="log", xlabel="partitions", ylabel="seconds", title="Cost against partitions"
    )
    right.set(
        xscale="log",
        yscale="log",
        xlabel="connections",
        ylabel="broker CPU",
        title="Cost against connections",
    )
    for ax in (left, right):
        ax.grid(True, which="both", alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
