"""The benchmark suite end to end (--quick), and the pieces it measures with.

The quick run starts real brokers (hmb and Tansu) and real clients, samples
the kernel's TCP counters, and aggregates with Spark; the assertions check
that every scenario produced numbers, the thesis's figures were joined in,
the plots exist, and no process the suite started is left behind.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from bench import tcp_sampler
from bench.hmb_process import ROOT


def test_tcp_sampler_counts_the_bytes_a_connection_sent() -> None:
    if not tcp_sampler.have_ss():
        pytest.skip("ss (iproute2) is not installed")
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        with socket.create_connection(("127.0.0.1", port)) as client:
            peer, _ = server.accept()
            with peer:
                before = tcp_sampler.sample(os.getpid(), port)
                client.sendall(b"x" * 300_000)
                got = 0
                while got < 300_000:
                    got += len(peer.recv(1 << 16))
                after = tcp_sampler.sample(os.getpid(), port)
    assert after.bytes_acked - before.bytes_acked >= 300_000
    assert tcp_sampler.sample(os.getpid() + 10**6, port).bytes_acked == 0  # another pid: nothing


def _suite_processes() -> set[tuple[int, str]]:
    """Processes the bench suite starts (drivers, hmb brokers in its temp dirs, Tansu),
    found by command line anywhere on the machine: orphans are re-parented to init,
    so looking at our own children would miss exactly the ones that matter."""
    found = set()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if "bench.driver" in cmd or "hmb-bench-" in cmd or ("tansu" in cmd and "--listener-url" in cmd):
            if _ours_or_orphaned(int(proc.name)):
                found.add((int(proc.name), cmd))
    return found


def _ours_or_orphaned(pid: int) -> bool:
    """Started under this test process, or orphaned (re-parented to init): not a process
    of another bench run that happens to share the machine (its parent is alive)."""
    me = os.getpid()
    first = True
    for _ in range(64):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return False
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == me:
            return True
        if ppid <= 1:
            return first  # the process itself was orphaned; an ancestor reaching init is not ours
        pid, first = ppid, False
    return False


@pytest.mark.skipif(
    shutil.which("java") is None, reason="Spark needs Java 17 (apt-get install openjdk-17-jre-headless)"
)
def test_quick_batch_size_study_end_to_end(tmp_path: Path) -> None:
    pytest.importorskip("pyspark")
    out = tmp_path / "results"
    before = _suite_processes()
    run = subprocess.run(
        [sys.executable, "-m", "bench", "batch-size", "--quick", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stderr[-4000:]
    report = (out / "report.md").read_text()
    rows = [line for line in report.splitlines() if line.startswith("| 16384 |")]
    assert len(rows) == 2, report  # produce and consume tables
    produce = [c.strip() for c in rows[0].strip("|").split("|")]
    for cell in produce[1:5]:  # S1..S4 measured, non-zero
        assert float(cell.split("±")[0]) > 0, report
    assert produce[5:9] == ["80", "32", "14", "16"], report  # Table 10.3's figures joined in
    assert "End-to-end latency" in report
    for png in ("batch-size-produce.png", "batch-size-consume.png", "batch-size-produce-per-second.png"):
        assert (out / png).stat().st_size > 10_000
    assert any((out / "samples.parquet").glob("*.parquet"))
    assert _suite_processes() - before == set()  # every process the run started has stopped
