"""The delivery study on a three-broker cluster, short: each new cluster fault once.

Each run starts its own ZooKeeper and three brokers, writes numbered
messages to a topic of 3 partitions at RF=3 and reads all partitions back.
The assertions are the guarantees and the evidence that the fault happened:
the leader of the partition being written is killed (or cut off) and another
broker takes over (a leader change is seen), and still no acknowledged
message of an acks=all producer is lost and the idempotent producer
duplicates none; rAck, whose receipts are znodes on a cluster, ends with
every record in the log.  The cluster column reaches the Spark report.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict
from pathlib import Path

import pytest

from bench import reliability
from bench.reliability_cluster import cluster_runs, unavailable

pytestmark = pytest.mark.skipif(unavailable() is not None, reason=f"no ZooKeeper: {unavailable()}")


def _run(semantics: reliability.Semantics, kind: str, records: int = 2000) -> reliability.Outcome:
    """A quick run whose leader fault (``kill`` or its twin ``partition``) starts after 1 s."""
    rate = records / 3.0  # three-second runs: the window falls mid-run
    kill = reliability.Fault("kill", 0.5, (1.0, 1.0))
    run = reliability.Run("quick", "librdkafka", semantics, kill, records, rate=rate)
    (on_cluster,) = [r for r in cluster_runs([run], "quick", 3) if r.fault.kind == kind]
    return reliability.execute(on_cluster, delivery_timeout_s=60)


@pytest.mark.parametrize("kind", ["kill", "partition"])
def test_leader_fault_loses_no_acknowledged_message(kind: str) -> None:
    outcome = _run(reliability.SEMANTICS["idempotent"], kind)
    assert outcome.cluster == 3 and outcome.partitions == 3 and outcome.min_isr == 2
    assert outcome.fault_value == 3.0  # held longer than the 2 s ZooKeeper session of the quick runs
    assert outcome.leader_changes >= 1, f"the {kind} moved no leader: {outcome}"
    assert outcome.lost_acked == 0 and outcome.acked == outcome.n, outcome
    assert outcome.m == outcome.m_distinct == outcome.n, f"lost or duplicated under {kind}: {outcome}"


def test_rack_on_a_cluster_ends_with_every_record(tmp_path: Path) -> None:
    run = reliability.Run("quick", "hmb", reliability.RACK, reliability.Fault(), 1000, 500)
    (on_cluster,) = cluster_runs([run], "quick", 3)
    outcome = reliability.execute(on_cluster, delivery_timeout_s=60)
    assert outcome.m_distinct == outcome.n, outcome
    assert outcome.retries is not None  # the monitor's resends are reported
    if shutil.which("java") is None:
        return
    pytest.importorskip("pyspark")
    from bench.report import render_reliability

    rows = [reliability.outcome_row(outcome), {**asdict(outcome), "cluster": 0, "published": ""}]
    (tmp_path / "outcomes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "skipped.jsonl").write_text(json.dumps({"semantics": "exactly-once", "reason": "why"}) + "\n")
    md, _plots = render_reliability(tmp_path / "outcomes.jsonl", tmp_path)
    report = md.read_text()
    assert "### quick, 3 brokers, min.insync.replicas 2" in report
    assert "### quick\n" in report  # the same cell on one broker is a table of its own
    assert "| none | 500 | rack | hmb | 1 |" in report
    assert "Not run (exactly-once): why" in report
