"""``python -m bench scale``'s arithmetic and report, on made-up rows (no broker)."""

from __future__ import annotations

from pathlib import Path

from bench import scale
from bench.scale import ConnectionRow, PartitionRow


def test_edge_ratio_compares_the_last_500_partitions_with_the_first() -> None:
    # batches of 500 partitions: the first batch 1 s, the last 3 s
    assert scale._edge_ratio([1.0, 2.0, 2.0, 3.0], 500) == 3.0
    # two batches of 250 make each end
    assert scale._edge_ratio([1.0, 1.0, 5.0, 2.0, 2.0], 250) == 2.0
    assert scale._edge_ratio([1.0], 500) != scale._edge_ratio([1.0], 500)  # NaN: too few batches


def test_the_file_system_probe_leaves_nothing_behind(tmp_path: Path) -> None:
    assert scale.fs_ms_per_dir(tmp_path, count=5) > 0
    assert list(tmp_path.iterdir()) == []


def test_report_puts_hmb_beside_tansu_with_their_ratio(tmp_path: Path) -> None:
    parts = [
        PartitionRow("hmb", 1000, create_s=2.0, rss_mb=60, rss_idle_mb=50, restart_s=0.6, empty_start_s=0.3),
        PartitionRow("tansu", 1000, create_s=0.5, rss_mb=20, rss_idle_mb=15),
    ]
    parts[0].fs_ms_per_dir = 0.25
    conns = [
        ConnectionRow("hmb", 1000, open_cpu_ms_per_conn=0.3, producing=1000),
        ConnectionRow("tansu", 1000, open_cpu_ms_per_conn=0.1, producing=1000),
    ]
    md = scale.render(parts, conns, "# header")
    assert "| 1,000 | create, s | 2.00 | 0.50 | 4.00 |" in md
    assert "| 1,000 | RSS per partition, KB | 10.00 | 5.00 | 2.00 |" in md
    assert "| 1,000 | restart / empty start | 2.00 | — | — |" in md
    assert "| 1,000 | file system before create: ms per directory of three files | 0.25 | — | — |" in md
    assert "| 1,000 | broker CPU per connection opened, ms | 0.30 | 0.10 | 3.00 |" in md
    scale.plot(parts, conns, tmp_path / "scale.png")
    assert (tmp_path / "scale.png").stat().st_size > 0
