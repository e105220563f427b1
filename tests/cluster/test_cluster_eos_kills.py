"""Exactly-once consume-transform-produce on three brokers while the application's transaction
coordinator is killed with kill -9: the short version of ``python -m bench eos-kills --cluster``.

The application (:mod:`bench.eos_app`, librdkafka) reads an RF 3 input topic and writes an RF 3
output topic, committing its input offsets in each transaction; each kill takes the broker
leading its transactional id's ``__transaction_state`` partition, and the next coordinator
finishes or aborts what was in flight.  Afterwards a read_committed reader of the output finds
every input record's result exactly once, in input order.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from cluster import Cluster, three_brokers
from replicas import LAG_MS, everyone_sees_everyone, no_tracebacks
from zookeeper import ZooKeeperProcess

from bench.eos_cluster import run_on

pytest.importorskip("confluent_kafka")

RECORDS = 10_000
KILLS = 2


@pytest.fixture(scope="module")
def cluster(zookeeper: ZooKeeperProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    for c in three_brokers(
        zookeeper.connect, tmp_path_factory.mktemp("eos"), f"replica.lag.time.max.ms={LAG_MS}"
    ):
        everyone_sees_everyone(c)
        yield c


def test_output_exactly_once_while_the_coordinator_is_killed(cluster: Cluster) -> None:
    outcome, failovers = run_on(cluster, "broker", RECORDS, KILLS, seed=7)
    assert outcome.kills == KILLS and len(failovers) == KILLS, outcome  # each landed mid-work
    assert (outcome.duplicates, outcome.missing) == (0, 0), outcome
    assert outcome.exactly_once_in_order, outcome
    no_tracebacks(cluster)
