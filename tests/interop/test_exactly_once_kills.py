"""Exactly-once consume-transform-produce under ``kill -9``: of the application, then of the broker.

An application (:mod:`bench.eos_app`, librdkafka) reads an input topic and
writes an output topic, committing its input offsets in each transaction.
It is killed with SIGKILL at random moments and started again; separately
the broker is killed and restarted under it.  Afterwards a read_committed
reader of the output finds every input record's result exactly once, in
input order.  The short version of the issue's loop (30 kills while
processing 200,000 records: ``python -m bench eos-kills``), sized for the
default test run: 40,000 records keep the application at work long enough
for every kill to land inside it (20,000 were done in 4.3 s on a quiet
machine, before the fourth kill came).
"""

from __future__ import annotations

import pytest
from broker_process import BrokerProcess

from bench.eos_kills import run

pytestmark = pytest.mark.interop

pytest.importorskip("confluent_kafka")

RECORDS = 40_000
KILLS = 4


@pytest.mark.parametrize("target", ["app", "broker"])
def test_output_exactly_once_after_kills(broker: BrokerProcess, target: str) -> None:
    outcome = run(broker, target, RECORDS, KILLS, seed=21)
    assert outcome.kills == KILLS, outcome  # every kill landed while the application worked
    assert (outcome.duplicates, outcome.missing) == (0, 0), outcome
    assert outcome.exactly_once_in_order, outcome
