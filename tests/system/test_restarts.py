"""Restarts after a crash (``kill -9``), against the real broker process.

What survives a crash is a property of the process and its files: producer
ids are never handed out twice, the cluster id stays, committed offsets
stay, a deletion interrupted half-way is finished at the next start.  The
same after a clean restart is tested in process (``tests/api``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from broker_process import BrokerProcess
from wire import WireClient, partitions_of
from wire import metadata as md
from wire import produce_value as produce
from wire_groups import LIST, commit, fetch_offset, heartbeat, make_topic, stable_member

from kproto import ApiKey, ErrorCode

CREATE, DELETE = ApiKey.CREATE_TOPICS, ApiKey.DELETE_TOPICS
INIT_PID = ApiKey.INIT_PRODUCER_ID


@pytest.fixture
def group(request: pytest.FixtureRequest) -> str:
    return "g-" + request.node.name


def new_producer_id(c: WireClient, version: int = 1) -> int:
    resp = c.request(INIT_PID, version, {"transactional_id": None, "transaction_timeout_ms": 60000})
    assert resp.error_code == ErrorCode.NONE
    assert resp.producer_epoch == 0
    return int(resp.producer_id)


def spec(
    name: str, partitions: int = 1, rf: int = 1, assignments: list[list[int]] | None = None
) -> dict[str, Any]:
    return {
        "name": name,
        "num_partitions": partitions,
        "replication_factor": rf,
        "assignments": [{"partition_index": i, "broker_ids": b} for i, b in enumerate(assignments or [])],
        "configs": [],
    }


def create(
    c: WireClient, version: int, *topics: dict[str, Any], validate_only: bool = False
) -> dict[str, Any]:
    body = {"topics": list(topics), "timeout_ms": 5000, "validate_only": validate_only}
    resp = c.request(CREATE, version, body)
    if version >= 2:
        assert resp.throttle_time_ms == 0
    return {t.name: t for t in resp.topics}


def delete(c: WireClient, version: int, *names: str) -> dict[str, int]:
    resp = c.request(DELETE, version, {"topic_names": list(names), "timeout_ms": 5000})
    if version >= 1:
        assert resp.throttle_time_ms == 0
    return {r.name: r.error_code for r in resp.responses}


def test_producer_ids_unique_across_restarts(make_broker: Any, tmp_path: Path) -> None:
    b = make_broker(data_dir=tmp_path / "pids")
    seen: list[int] = []
    with WireClient(b.bootstrap) as c:
        seen += [new_producer_id(c, v) for v in (0, 1, 1)]
    b.stop()  # clean
    b.restart()
    with WireClient(b.bootstrap) as c:
        seen += [new_producer_id(c) for _ in range(2)]
    b.kill()  # crash: the reserved block is on disk before any id of it was handed out
    b.restart()
    with WireClient(b.bootstrap) as c:
        seen.append(new_producer_id(c))
    assert len(set(seen)) == len(seen), seen
    assert seen == sorted(seen), seen


def test_deleted_topic_stays_deleted_after_restart(make_broker: Any, tmp_path: Path) -> None:
    data = tmp_path / "del-restart"
    b = make_broker(data_dir=data)
    with WireClient(b.bootstrap) as c:
        create(c, 4, spec("dr-keep", 1), spec("dr-drop", 3))
        produce(c, "dr-keep", b"kept")
        assert delete(c, 3, "dr-drop") == {"dr-drop": 0}
    # a deletion interrupted between rename and removal is finished at the next start
    leftover = data / "dr-crash-0.0123456789abcdef-delete"
    leftover.mkdir()
    (leftover / "00000000000000000000.log").write_bytes(b"junk")
    b.kill()
    b.restart()
    with WireClient(b.bootstrap) as c:
        assert partitions_of(c, "dr-drop") is None
        assert partitions_of(c, "dr-keep") == 1
    assert not leftover.exists()
    partitions = sorted(p.name for p in data.iterdir() if p.is_dir() and p.name != "topic-configs")
    assert partitions == ["__consumer_offsets-0", "dr-keep-0"]


def test_cluster_id_stable_across_restarts(make_broker: Any, tmp_path: Any) -> None:
    b = make_broker(data_dir=tmp_path / "cid")
    with WireClient(b.bootstrap) as c:
        first = md(c, 2, None).cluster_id
    b.stop()
    b.restart()
    with WireClient(b.bootstrap) as c:
        assert md(c, 8, None).cluster_id == first
    b.kill()
    b.restart()
    with WireClient(b.bootstrap) as c:
        assert md(c, 5, None).cluster_id == first
    other = make_broker(data_dir=tmp_path / "other")
    with WireClient(other.bootstrap) as c:
        assert md(c, 2, None).cluster_id != first


def test_committed_offsets_survive_restarts(make_broker: Callable[..., BrokerProcess], group: str) -> None:
    b = make_broker()
    topic = "resume"
    with WireClient(b.bootstrap) as c:
        make_topic(c, topic)
        j = stable_member(c, group)
        assert commit(c, group, 1, j.member_id, topic, 5) == ErrorCode.NONE
    assert b.stop() == 0  # clean shutdown
    b.restart()
    with WireClient(b.bootstrap) as c:
        p = fetch_offset(c, group, topic)
        assert (p.committed_offset, p.metadata) == (5, "md")
        # membership is not durable: the old member is unknown and rejoins
        assert heartbeat(c, group, 1, j.member_id) == ErrorCode.UNKNOWN_MEMBER_ID
        assert commit(c, group, 1, j.member_id, topic, 6) == ErrorCode.ILLEGAL_GENERATION
        j2 = stable_member(c, group)
        assert commit(c, group, j2.generation_id, j2.member_id, topic, 7) == ErrorCode.NONE
    b.kill()  # crash
    b.restart()
    with WireClient(b.bootstrap) as c:
        assert fetch_offset(c, group, topic).committed_offset == 7
        listed = c.request(LIST, 2, {})
        assert (group, "") in [(g.group_id, g.protocol_type) for g in listed.groups]
