"""The reliability study's quick matrix end to end: faults, both clients, Spark.

Each run produces numbered messages under one delivery semantics while a
fault holds (connection resets, a broker kill -9 and restart, a delay or
stall window, packet loss when root), then reads everything back.  The
assertions are the guarantees, not the figures: with acks >= 1 no
acknowledged message is ever missing, the idempotent producer never
leaves a duplicate, and the exactly-once row (a transactional producer read
back read_committed) neither loses nor duplicates one.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench.hmb_process import ROOT


@pytest.mark.skipif(
    shutil.which("java") is None, reason="Spark needs Java 17 (apt-get install openjdk-17-jre-headless)"
)
def test_quick_reliability_matrix(tmp_path: Path) -> None:
    pytest.importorskip("pyspark")
    out = tmp_path / "rel"
    run = subprocess.run(
        [sys.executable, "-m", "bench", "reliability", "quick", "--records", "2000", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stderr[-4000:]
    outcomes = [json.loads(line) for line in (out / "outcomes.jsonl").read_text().splitlines()]
    assert {o["client"] for o in outcomes} == {"hmb", "librdkafka"}
    assert {"none", "reset", "kill", "delay", "stall"} <= {o["fault_kind"] for o in outcomes}
    for o in outcomes:
        where = f"{o['client']} {o['semantics']} {o['fault']}"
        if o["acks"] != 0:
            assert o["lost_acked"] == 0, f"acknowledged messages lost: {where}"
            assert o["failed"] == 0 and o["acked"] == o["n"], f"not every message acknowledged: {where}"
            assert o["m_distinct"] == o["n"], f"messages missing: {where}"
        if o["idempotent"]:
            assert o["dup_ids"] == 0, f"duplicates with the idempotent producer: {where}"
        if o["semantics"] == "exactly-once":  # alpha = beta = 0, under every fault
            assert o["m"] == o["m_distinct"] == o["n"], f"exactly-once lost or duplicated: {where}"
        if o["fault_kind"] == "none":
            assert o["m"] == o["m_distinct"] == o["n"], f"loss or duplicates without a fault: {where}"
    report = (out / "report.md").read_text()
    assert "| none | 100 | idempotent | hmb |" in report
