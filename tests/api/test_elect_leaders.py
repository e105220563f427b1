"""ElectLeaders v0-v2 in process, on a broker alone.

Alone, every partition has one replica, its preferred one, and it leads:
every known partition is ELECTION_NOT_NEEDED, for both election types, and
an unknown one UNKNOWN_TOPIC_OR_PARTITION.  The cluster's elections (the
controller moving leadership, NOT_CONTROLLER elsewhere) run in
tests/cluster/test_cluster_control.py; their rules in tests/cluster/test_election_rules.py.
What can fail here: v0 read with an election type, the null list not
meaning "every partition", an unauthorised principal let through (Alter on
the cluster), an election type Kafka does not define accepted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hmb.security.acl import CLUSTER_NAME, Operation, ResourceType
from kproto import ApiKey, ErrorCode

from .acls import AUTHORIZER, acl, as_user, grant
from .bodies import metadata_body
from .harness import InProcessBroker

ELECT_LEADERS = ApiKey.ELECT_LEADERS


def body(topics: list[tuple[str, list[int]]] | None, election_type: int = 0) -> dict[str, Any]:
    parts = None if topics is None else [{"topic": t, "partitions": ps} for t, ps in topics]
    return {"election_type": election_type, "topic_partitions": parts, "timeout_ms": 5000}


def outcome(resp: Any) -> dict[tuple[str, int], int]:
    return {
        (t.topic, p.partition_id): p.error_code
        for t in resp.replica_election_results
        for p in t.partition_result
    }


async def make_topic(broker: InProcessBroker, name: str) -> None:
    await broker.request(ApiKey.METADATA, 8, metadata_body(name))


@pytest.mark.parametrize(("version", "election_type"), [(0, 0), (1, 0), (1, 1), (2, 0), (2, 1)])
async def test_alone_no_election_is_needed(broker: InProcessBroker, version: int, election_type: int) -> None:
    await make_topic(broker, "t")
    resp = await broker.request(ELECT_LEADERS, version, body([("t", [0]), ("nope", [0])], election_type))
    assert outcome(resp) == {
        ("t", 0): ErrorCode.ELECTION_NOT_NEEDED,
        ("nope", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    }
    if version >= 1:
        assert resp.error_code == ErrorCode.NONE


async def test_a_null_list_asks_for_every_partition(make_broker: Any) -> None:
    broker = make_broker("num.partitions=2")
    await make_topic(broker, "a")
    resp = await broker.request(ELECT_LEADERS, 2, body(None))
    got = outcome(resp)
    assert {("a", 0), ("a", 1)} <= set(got)
    assert set(got.values()) == {ErrorCode.ELECTION_NOT_NEEDED}


async def test_an_unknown_election_type_is_refused(broker: InProcessBroker) -> None:
    await make_topic(broker, "t")
    resp = await broker.request(ELECT_LEADERS, 2, body([("t", [0])], election_type=5))
    assert resp.error_code == ErrorCode.INVALID_REQUEST
    assert outcome(resp) == {("t", 0): ErrorCode.INVALID_REQUEST}


async def test_needs_alter_on_the_cluster(tmp_path: Path) -> None:
    b = InProcessBroker(tmp_path / "data", AUTHORIZER, "super.users=User:admin")
    try:
        resp = await b.request(ELECT_LEADERS, 0, body([("t", [0])]), session=as_user("alice"))
        assert outcome(resp) == {("t", 0): ErrorCode.CLUSTER_AUTHORIZATION_FAILED}
        await grant(b, acl(ResourceType.CLUSTER, CLUSTER_NAME, "User:alice", Operation.ALTER))
        resp = await b.request(ELECT_LEADERS, 2, body([("t", [0])]), session=as_user("alice"))
        assert resp.error_code == ErrorCode.NONE
        assert outcome(resp) == {("t", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
    finally:
        b.close()
