"""Exactly-once under ``kill -9`` on a three-broker cluster: the transaction coordinator killed.

    python -m bench eos-kills --cluster [--records 200000] [--kills 30] [--target broker|app]

The loop of :mod:`bench.eos_kills` against three ``hmb serve`` brokers on a
ZooKeeper of their own (the cluster tests' fixture), input and output topics
with replication factor 3 and ``min.insync.replicas`` 2.  With ``--target
broker`` each kill is a SIGKILL of the broker that coordinates the
application's transactional id (the leader of its ``__transaction_state``
partition, read from ZooKeeper at that moment), once all its replicas are
in sync; the loop waits until another broker has taken the partition over,
then starts the killed one again.  The output must hold every input record's result exactly once, in
order.  Printed as one JSON object (the fields of
:class:`~bench.eos_kills.KillsOutcome` and the coordinator's failover times,
kill to the state partition's new leader in ZooKeeper).  The suite's short
version is ``tests/cluster/test_cluster_eos_kills.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench.eos_kills import Kill, KillsOutcome, kill_app, run_with
from hmb.groups.offset_partitions import coordinator_partition

TXN_STATE = "__transaction_state"
STATE_PARTITIONS = 50  # transaction.state.log.num.partitions, the default the brokers run with
SETTLE_S = 90.0


def coordinator_killer(cluster: Any, transactional_id: str, failovers: list[float]) -> Kill:
    """A Kill that SIGKILLs ``transactional_id``'s coordinator and starts it again once another
    broker leads its state partition (each failover's seconds appended to ``failovers``)."""
    path = f"/brokers/topics/{TXN_STATE}/partitions/"
    path += f"{coordinator_partition(transactional_id, STATE_PARTITIONS)}/state"

    def leader() -> int:
        got = cluster.json_if_any(path)
        return -1 if got is None else int(got["leader"])

    def whole() -> bool:  # every replica in sync: a kill cannot leave the partition leaderless
        got = cluster.json_if_any(path)
        return got is not None and got["leader"] >= 0 and len(got["isr"]) == len(cluster.brokers)

    def kill(_app: subprocess.Popen[bytes]) -> None:
        cluster.wait(whole, SETTLE_S, f"every replica of {path} in sync")
        victim = leader()
        cluster.brokers[victim].kill()
        killed_at = time.monotonic()
        try:
            cluster.wait(lambda: leader() not in (-1, victim), SETTLE_S, "a new coordinator")
        except AssertionError as exc:
            raise AssertionError(f"{exc}: {cluster.json_if_any(path)}") from None
        failovers.append(round(time.monotonic() - killed_at, 3))
        cluster.brokers[victim].restart()
        cluster.wait(lambda: cluster.zk.exists(f"/brokers/ids/{victim}"), SETTLE_S, "the broker back")

    return kill


def prepare(cluster: Any, target: str) -> None:
    """The loop's topics at RF 3, made before the application auto-creates them at RF 1."""
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    config = {"min.insync.replicas": "2"}
    names = [f"eos-{target}-in", f"eos-{target}-out"]
    for future in admin.create_topics([NewTopic(n, 1, 3, config=config) for n in names]).values():
        future.result(60)


def run_on(
    cluster: Any, target: str, records: int, kills: int, seed: int = 0
) -> tuple[KillsOutcome, list[float]]:
    """The loop on ``cluster`` (every broker in the bootstrap list, down ones included)."""
    prepare(cluster, target)
    failovers: list[float] = []
    kill = kill_app if target == "app" else coordinator_killer(cluster, f"eos-{target}-tx", failovers)
    bootstrap = ",".join(b.bootstrap for b in cluster.brokers.values())
    return run_with(bootstrap, target, kill, records, kills, seed), failovers


def main(target: str, records: int, kills: int, seed: int) -> int:
    root = Path(__file__).resolve().parents[1]
    sys.path[:0] = [str(root / "tests" / "support"), str(root / "tests" / "cluster")]
    from cluster import Cluster  # type: ignore[import-not-found]  # the cluster tests' brokers
    from replicas import everyone_sees_everyone  # type: ignore[import-not-found]
    from zookeeper import ZooKeeperProcess, missing  # type: ignore[import-not-found]

    if (why := missing()) is not None:
        print(json.dumps({"skipped": why}))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "zk").mkdir()
        with ZooKeeperProcess(Path(tmp) / "zk") as zk:
            cluster = Cluster(zk.connect, Path(tmp), extra=("replica.lag.time.max.ms=5000",)).start()
            try:
                everyone_sees_everyone(cluster)
                outcome, failovers = run_on(cluster, target, records, kills, seed)
            finally:
                cluster.close()
    print(json.dumps({**asdict(outcome), "cluster": True, "coordinator_failover_s": failovers}))
    return 0 if outcome.exactly_once_in_order else 1
