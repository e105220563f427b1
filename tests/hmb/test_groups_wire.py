"""Consumer groups on the wire: JoinGroup, SyncGroup, Heartbeat, LeaveGroup, DescribeGroups,
ListGroups and group-checked OffsetCommit/OffsetFetch, against the real broker process.

The long-polls (JoinGroup, SyncGroup) are driven by pipelining: a request is
sent on one connection and its answer read after other members have acted,
so no test needs threads.  Timeouts are short (the broker is started with
``group.min.session.timeout.ms=100``); waits are bounded and wait on a
condition (a response arriving), never on a guessed sleep.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from broker_process import BrokerProcess
from wire import WireClient, metadata_body

import kproto
from hmb.config import ConfigError, from_properties
from kproto import ApiKey, ErrorCode

JOIN, SYNC, HEARTBEAT, LEAVE = ApiKey.JOIN_GROUP, ApiKey.SYNC_GROUP, ApiKey.HEARTBEAT, ApiKey.LEAVE_GROUP
DESCRIBE, LIST = ApiKey.DESCRIBE_GROUPS, ApiKey.LIST_GROUPS
COMMIT, FETCH_OFFSETS, METADATA = ApiKey.OFFSET_COMMIT, ApiKey.OFFSET_FETCH, ApiKey.METADATA
INT32_MIN = -(2**31)


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    data: Path = tmp_path_factory.mktemp("groups") / "data"
    with BrokerProcess(data, "group.min.session.timeout.ms=100", "num.partitions=2") as b:
        yield b


@pytest.fixture
def group(request: pytest.FixtureRequest) -> str:
    return "g-" + request.node.name


# --------------------------------------------------------------------------- helpers


def join_body(
    group: str,
    member: str = "",
    *,
    session_ms: int = 10_000,
    rebalance_ms: int = 10_000,
    protocols: tuple[tuple[str, bytes], ...] = (("range", b"meta"),),
    protocol_type: str = "consumer",
) -> dict[str, Any]:
    return {
        "group_id": group,
        "session_timeout_ms": session_ms,
        "rebalance_timeout_ms": rebalance_ms,
        "member_id": member,
        "group_instance_id": None,
        "protocol_type": protocol_type,
        "protocols": [{"name": n, "metadata": m} for n, m in protocols],
    }


def receive(c: WireClient, api_key: int, version: int, cid: int) -> Any:
    frame = c.read_frame()
    assert frame is not None, "broker closed the connection"
    resp = kproto.decode_response(api_key, version, frame)
    assert resp.correlation_id == cid
    return resp.body


def member_id(c: WireClient, group: str, version: int = 5, **kw: Any) -> str:
    """The member id for a first join: v4+ hand it out with MEMBER_ID_REQUIRED."""
    if version < 4:
        return ""
    first = c.request(JOIN, version, join_body(group, **kw))
    assert first.error_code == ErrorCode.MEMBER_ID_REQUIRED and first.member_id
    assert (first.generation_id, first.leader, list(first.members)) == (-1, "", [])
    return str(first.member_id)


def send_join(c: WireClient, group: str, member: str, version: int = 5, **kw: Any) -> int:
    """Send a JoinGroup without waiting for its answer.  Another connection's next request may
    overtake it: wait for its effect (another member's heartbeat says rebalance) before relying on it."""
    return c.send(JOIN, version, join_body(group, member, **kw))


def join(c: WireClient, group: str, member: str | None = None, version: int = 5, **kw: Any) -> Any:
    """A join that needs nobody else (a new group, or every other member already waiting)."""
    if member is None:
        member = member_id(c, group, version, **kw)
    resp = c.request(JOIN, version, join_body(group, member, **kw))
    assert resp.error_code == ErrorCode.NONE, ErrorCode(resp.error_code).name
    return resp


def sync_body(group: str, generation: int, member: str, assignments: dict[str, bytes] | None = None) -> dict:
    return {
        "group_id": group,
        "generation_id": generation,
        "member_id": member,
        "group_instance_id": None,
        "assignments": [{"member_id": m, "assignment": a} for m, a in (assignments or {}).items()],
    }


def sync(
    c: WireClient,
    group: str,
    generation: int,
    member: str,
    assignments: dict[str, bytes] | None = None,
    version: int = 3,
) -> Any:
    return c.request(SYNC, version, sync_body(group, generation, member, assignments))


def heartbeat(c: WireClient, group: str, generation: int, member: str, version: int = 3) -> int:
    body = {"group_id": group, "generation_id": generation, "member_id": member, "group_instance_id": None}
    return int(c.request(HEARTBEAT, version, body).error_code)


def leave(c: WireClient, group: str, member: str, version: int = 2) -> int:
    return int(c.request(LEAVE, version, {"group_id": group, "member_id": member}).error_code)


def stable_member(c: WireClient, group: str, assignment: bytes = b"all", **kw: Any) -> Any:
    """A lone member that joined and synced: returns the JoinGroup response."""
    j = join(c, group, **kw)
    assert j.leader == j.member_id and j.generation_id >= 1
    s = sync(c, group, j.generation_id, j.member_id, {j.member_id: assignment})
    assert (s.error_code, s.assignment) == (ErrorCode.NONE, assignment)
    return j


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 15.0) -> float:
    """Poll a condition the way a client does (its heartbeat interval); returns the seconds taken."""
    start = time.monotonic()
    while not condition():
        if time.monotonic() - start > timeout:
            raise AssertionError(f"timed out waiting until {what}")
        time.sleep(0.05)
    return time.monotonic() - start


def commit_body(group: str, generation: int, member: str, topic: str, offset: int, **extra: Any) -> dict:
    return {
        "group_id": group,
        "generation_id": generation,
        "member_id": member,
        "group_instance_id": None,
        "retention_time_ms": -1,
        "topics": [
            {
                "name": topic,
                "partitions": [
                    {
                        "partition_index": 0,
                        "committed_offset": offset,
                        "committed_leader_epoch": -1,
                        "commit_timestamp": -1,
                        "committed_metadata": "md",
                        **extra,
                    }
                ],
            }
        ],
    }


def commit(
    c: WireClient, group: str, generation: int, member: str, topic: str, offset: int, version: int = 7
) -> int:
    body = commit_body(group, generation, member, topic, offset)
    return int(c.request(COMMIT, version, body).topics[0].partitions[0].error_code)


def fetch_offset(c: WireClient, group: str, topic: str, version: int = 5, partition: int = 0) -> Any:
    body = {"group_id": group, "topics": [{"name": topic, "partition_indexes": [partition]}]}
    return c.request(FETCH_OFFSETS, version, body).topics[0].partitions[0]


def make_topic(c: WireClient, topic: str) -> None:
    c.request(METADATA, 0, metadata_body(topic))  # auto-created


# --------------------------------------------------------------------------- join / sync / heartbeat / leave


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_a_lone_member_joins_syncs_heartbeats_and_leaves(
    shared: BrokerProcess, group: str, version: int
) -> None:
    with WireClient(shared.bootstrap) as c:
        start = time.monotonic()
        j = c.request(JOIN, version, join_body(group))
        # no initial rebalance delay (Kafka's would be 3 s), nothing waited for (half the session is 5 s)
        assert time.monotonic() - start < 2.5, "a rebalance with every member present must not wait"
        assert (j.error_code, j.generation_id, j.protocol_name) == (ErrorCode.NONE, 1, "range")
        assert j.member_id and j.leader == j.member_id
        assert [(m.member_id, m.metadata) for m in j.members] == [(j.member_id, b"meta")]
        s = sync(c, group, 1, j.member_id, {j.member_id: b"my-partitions"}, version=min(version, 3))
        assert (s.error_code, s.assignment) == (ErrorCode.NONE, b"my-partitions")
        assert heartbeat(c, group, 1, j.member_id, version=min(version, 3)) == ErrorCode.NONE
        assert leave(c, group, j.member_id, version=min(version, 2)) == ErrorCode.NONE
        assert heartbeat(c, group, 1, j.member_id) == ErrorCode.UNKNOWN_MEMBER_ID
        assert leave(c, group, j.member_id) == ErrorCode.UNKNOWN_MEMBER_ID


@pytest.mark.parametrize("version", [4, 5])
def test_member_id_required_from_v4(shared: BrokerProcess, group: str, version: int) -> None:
    with WireClient(shared.bootstrap) as c:
        mid = member_id(c, group, version)
        j = join(c, group, mid, version)
        assert (j.member_id, j.leader, j.generation_id) == (mid, mid, 1)
        if version >= 5:
            assert [m.group_instance_id for m in j.members] == [None]
        made_up = c.request(JOIN, version, join_body(group, "made-up-id"))
        assert (made_up.error_code, made_up.member_id) == (ErrorCode.UNKNOWN_MEMBER_ID, "made-up-id")


def test_join_errors(shared: BrokerProcess, group: str) -> None:
    with WireClient(shared.bootstrap) as c:

        def error(version: int = 5, **kw: Any) -> int:
            body = join_body(kw.pop("group_id", group), **kw)
            return int(c.request(JOIN, version, body).error_code)

        assert error(group_id="") == ErrorCode.INVALID_GROUP_ID
        assert error(session_ms=50) == ErrorCode.INVALID_SESSION_TIMEOUT  # below group.min.session.timeout.ms
        assert error(session_ms=1_800_001) == ErrorCode.INVALID_SESSION_TIMEOUT  # above Kafka's max default
        assert error(protocols=()) == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
        assert error(protocol_type="") == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
        stable_member(c, group)
        with WireClient(shared.bootstrap) as other:
            mid = member_id(other, group)
            assert error(member=mid, protocols=(("sticky", b""),)) == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
            assert error(member=mid, protocol_type="connect") == ErrorCode.INCONSISTENT_GROUP_PROTOCOL


def test_a_joining_member_rebalances_the_group_without_waiting(shared: BrokerProcess, group: str) -> None:
    with WireClient(shared.bootstrap) as a, WireClient(shared.bootstrap) as b:
        ja = stable_member(a, group)
        mid_b = member_id(b, group)
        cid_b = send_join(b, group, mid_b)  # b waits for a to rejoin
        assert wait_for(
            lambda: heartbeat(a, group, 1, ja.member_id) == ErrorCode.REBALANCE_IN_PROGRESS, "a told"
        )
        start = time.monotonic()
        ja2 = join(a, group, ja.member_id)
        jb = receive(b, JOIN, 5, cid_b)
        assert time.monotonic() - start < 2.5, "the rebalance completes as soon as every member rejoined"
        assert ja2.generation_id == jb.generation_id == 2
        assert ja2.leader == jb.leader == ja.member_id
        assert sorted(m.member_id for m in ja2.members) == sorted([ja.member_id, mid_b])
        assert list(jb.members) == []  # only the leader gets the members
        # the follower's SyncGroup waits for the leader's
        cid_sync = b.send(SYNC, 3, sync_body(group, 2, mid_b))
        assert heartbeat(a, group, 2, ja.member_id) == ErrorCode.NONE  # CompletingRebalance: fine
        s = sync(a, group, 2, ja.member_id, {ja.member_id: b"p0", mid_b: b"p1"})
        assert s.assignment == b"p0"
        sb = receive(b, SYNC, 3, cid_sync)
        assert (sb.error_code, sb.assignment) == (ErrorCode.NONE, b"p1")
        assert heartbeat(b, group, 2, mid_b) == ErrorCode.NONE
        assert heartbeat(b, group, 1, mid_b) == ErrorCode.ILLEGAL_GENERATION
        assert sync(b, group, 1, mid_b).error_code == ErrorCode.ILLEGAL_GENERATION
        assert sync(b, group, 2, "nobody").error_code == ErrorCode.UNKNOWN_MEMBER_ID

        # b leaves: a is told to rejoin and is alone in generation 3 at once
        assert leave(b, group, mid_b) == ErrorCode.NONE
        assert heartbeat(a, group, 2, ja.member_id) == ErrorCode.REBALANCE_IN_PROGRESS
        ja3 = join(a, group, ja.member_id)
        assert (ja3.generation_id, [m.member_id for m in ja3.members]) == (3, [ja.member_id])


def test_a_silent_member_is_dropped_at_its_session_timeout(shared: BrokerProcess, group: str) -> None:
    with WireClient(shared.bootstrap) as a, WireClient(shared.bootstrap) as b:
        ja = stable_member(a, group, session_ms=1000)
        mid_b = member_id(b, group, session_ms=1000)
        cid = send_join(b, group, mid_b, session_ms=1000)
        wait_for(lambda: heartbeat(a, group, 1, ja.member_id) == ErrorCode.REBALANCE_IN_PROGRESS, "b joined")
        ja2 = join(a, group, ja.member_id, session_ms=1000)
        jb = receive(b, JOIN, 5, cid)
        sync(a, group, 2, ja.member_id, {})
        assert sync(b, group, 2, mid_b).error_code == ErrorCode.NONE
        # b goes quiet; a keeps heartbeating until it is told to rebalance
        waited = wait_for(
            lambda: heartbeat(a, group, ja2.generation_id, ja.member_id) == ErrorCode.REBALANCE_IN_PROGRESS,
            "b's session expires",
        )
        assert 0.5 < waited < 5
        ja3 = join(a, group, ja.member_id, session_ms=1000)
        assert (ja3.generation_id, [m.member_id for m in ja3.members]) == (3, [ja.member_id])
        assert heartbeat(b, group, jb.generation_id, mid_b) == ErrorCode.UNKNOWN_MEMBER_ID


def test_a_member_that_does_not_rejoin_is_dropped_at_the_rebalance_timeout(
    shared: BrokerProcess, group: str
) -> None:
    kw: dict[str, Any] = {"session_ms": 10_000, "rebalance_ms": 1500}
    with WireClient(shared.bootstrap) as a, WireClient(shared.bootstrap) as b:
        ja = stable_member(a, group, **kw)
        mid_b = member_id(b, group, **kw)
        start = time.monotonic()
        cid = send_join(b, group, mid_b, **kw)
        # a stays alive (heartbeats) but never rejoins
        wait_for(lambda: heartbeat(a, group, 1, ja.member_id) == ErrorCode.REBALANCE_IN_PROGRESS, "rebalance")
        jb = receive(b, JOIN, 5, cid)
        assert 1.4 < time.monotonic() - start < 5
        assert (jb.error_code, jb.leader, [m.member_id for m in jb.members]) == (0, mid_b, [mid_b])
        assert heartbeat(a, group, 1, ja.member_id) == ErrorCode.UNKNOWN_MEMBER_ID


def test_members_whose_connections_are_gone_do_not_block_a_rebalance(
    shared: BrokerProcess, group: str
) -> None:
    """a's JoinGroup is pending when its client disconnects, b simply dies: the newcomer c gets the
    group after about one session timeout (1 s), not the rebalance timeout (60 s).

    (Whether a's JoinGroup reaches the coordinator before the broker sees the
    disconnect is up to the scheduler; both orders must end the same way.  The
    abandoned-join order is tested exactly in virtual time in test_group_coordinator.)"""
    kw: dict[str, Any] = {"session_ms": 1000, "rebalance_ms": 60_000}
    a, b, c = (WireClient(shared.bootstrap, timeout=30) for _ in range(3))
    try:
        ja = stable_member(a, group, **kw)
        mid_b = member_id(b, group, **kw)
        cid_b = send_join(b, group, mid_b, **kw)
        wait_for(lambda: heartbeat(a, group, 1, ja.member_id) == ErrorCode.REBALANCE_IN_PROGRESS, "b joined")
        join(a, group, ja.member_id, **kw)
        receive(b, JOIN, 5, cid_b)
        sync(a, group, 2, ja.member_id, {})
        sync(b, group, 2, mid_b)
        mid_c = member_id(c, group, **kw)
        cid_c = send_join(c, group, mid_c, **kw)
        wait_for(lambda: heartbeat(a, group, 2, ja.member_id) == ErrorCode.REBALANCE_IN_PROGRESS, "rebalance")
        send_join(a, group, ja.member_id, **kw)  # pending: b has not rejoined
        a.sock.shutdown(socket.SHUT_WR)  # ... and a's client goes away
        b.close()
        start = time.monotonic()
        jc = receive(c, JOIN, 5, cid_c)
        assert time.monotonic() - start < 10
        assert (jc.error_code, jc.generation_id, [m.member_id for m in jc.members]) == (0, 3, [mid_c])
        assert a.read_frame() is None, "an abandoned JoinGroup gets no answer"
    finally:
        for client in (a, b, c):
            client.close()


def test_a_follower_that_disconnects_while_waiting_in_sync_expires(shared: BrokerProcess, group: str) -> None:
    """A pending SyncGroup keeps its member alive only while its client is there."""
    kw: dict[str, Any] = {"session_ms": 1000}
    with WireClient(shared.bootstrap) as a, WireClient(shared.bootstrap) as b:
        ja = stable_member(a, group, **kw)
        mid_b = member_id(b, group, **kw)
        cid_b = send_join(b, group, mid_b, **kw)
        wait_for(lambda: heartbeat(a, group, 1, ja.member_id) == ErrorCode.REBALANCE_IN_PROGRESS, "b joined")
        join(a, group, ja.member_id, **kw)
        receive(b, JOIN, 5, cid_b)
        b.send(SYNC, 3, sync_body(group, 2, mid_b))  # waits for the leader's SyncGroup ...
        b.sock.shutdown(socket.SHUT_WR)  # ... until b's client goes away
        # the leader keeps heartbeating without syncing; b's session runs out
        waited = wait_for(
            lambda: heartbeat(a, group, 2, ja.member_id) == ErrorCode.REBALANCE_IN_PROGRESS, "b expires"
        )
        assert waited < 10
        assert b.read_frame() is None, "an abandoned SyncGroup gets no answer"
        j = join(a, group, ja.member_id, **kw)
        assert [m.member_id for m in j.members] == [ja.member_id]


def test_leave_group_v3_answers_per_member(shared: BrokerProcess, group: str) -> None:
    with WireClient(shared.bootstrap) as c:
        j = stable_member(c, group)
        body = {
            "group_id": group,
            "members": [
                {"member_id": j.member_id, "group_instance_id": None},
                {"member_id": "stranger", "group_instance_id": None},
            ],
        }
        resp = c.request(LEAVE, 3, body)
        assert resp.error_code == ErrorCode.NONE
        assert [(m.member_id, m.error_code) for m in resp.members] == [
            (j.member_id, ErrorCode.NONE),
            ("stranger", ErrorCode.UNKNOWN_MEMBER_ID),
        ]


# --------------------------------------------------------------------------- offsets


def test_commits_are_checked_against_the_generation(shared: BrokerProcess, group: str) -> None:
    topic = group + ".t"
    with WireClient(shared.bootstrap) as a, WireClient(shared.bootstrap) as b:
        make_topic(a, topic)
        for version in range(1, 8):  # a simple (assign()) commit into a group nobody joined
            assert commit(a, group, -1, "", topic, version, version=version) == ErrorCode.NONE
        assert commit(a, group, 0, "", topic, 9, version=0) == ErrorCode.NONE  # v0 has no generation
        ja = stable_member(a, group)
        for version in range(1, 8):
            assert commit(a, group, 1, ja.member_id, topic, 10 + version, version=version) == ErrorCode.NONE
            assert (
                commit(a, group, 2, ja.member_id, topic, 0, version=version) == ErrorCode.ILLEGAL_GENERATION
            )
            assert commit(a, group, 1, "stranger", topic, 0, version=version) == ErrorCode.UNKNOWN_MEMBER_ID
            assert commit(a, group, -1, "", topic, 0, version=version) == ErrorCode.UNKNOWN_MEMBER_ID
        assert fetch_offset(a, group, topic).committed_offset == 17
        # while a rebalance is prepared, members of the current generation may still commit
        mid_b = member_id(b, group)
        cid_b = send_join(b, group, mid_b)
        wait_for(lambda: heartbeat(a, group, 1, ja.member_id) == ErrorCode.REBALANCE_IN_PROGRESS, "rebalance")
        assert commit(a, group, 1, ja.member_id, topic, 20) == ErrorCode.NONE
        join(a, group, ja.member_id)
        receive(b, JOIN, 5, cid_b)
        # between JoinGroup and SyncGroup: not yet
        assert commit(a, group, 2, ja.member_id, topic, 21) == ErrorCode.REBALANCE_IN_PROGRESS
        assert commit(a, group, 1, ja.member_id, topic, 21) == ErrorCode.ILLEGAL_GENERATION
        sync(a, group, 2, ja.member_id, {})
        assert commit(b, group, 2, mid_b, topic, 22) == ErrorCode.NONE
        assert fetch_offset(a, group, topic).committed_offset == 22


def test_offset_fetch_versions(shared: BrokerProcess, group: str) -> None:
    topic = group + ".t"
    with WireClient(shared.bootstrap) as c:
        make_topic(c, topic)
        body = commit_body(group, -1, "", topic, 41, committed_leader_epoch=7)
        body["topics"][0]["partitions"].append(
            {
                "partition_index": 1,
                "committed_offset": 42,
                "committed_leader_epoch": 7,
                "committed_metadata": None,
            }
        )
        resp = c.request(COMMIT, 7, body)
        assert [p.error_code for p in resp.topics[0].partitions] == [0, 0]
        assert resp.throttle_time_ms == 0
        # v2-4 retention time is accepted
        retained = commit_body(group, -1, "", topic, 43)
        retained["retention_time_ms"] = 86_400_000
        assert c.request(COMMIT, 2, retained).topics[0].partitions[0].error_code == ErrorCode.NONE

        for version in range(6):
            p = fetch_offset(c, group, topic, version)
            assert (p.committed_offset, p.metadata, p.error_code) == (43, "md", ErrorCode.NONE)
            if version >= 5:
                assert p.committed_leader_epoch == -1  # leader epochs are always -1 here
        unknown = fetch_offset(c, group + "-never", topic)
        assert (unknown.committed_offset, unknown.metadata, unknown.error_code) == (-1, "", ErrorCode.NONE)

        for version in (2, 3, 4, 5):  # null topics: everything the group committed
            every = c.request(FETCH_OFFSETS, version, {"group_id": group, "topics": None})
            assert every.error_code == ErrorCode.NONE
            got = {
                (t.name, p.partition_index): (p.committed_offset, p.metadata)
                for t in every.topics
                for p in t.partitions
            }
            assert got == {(topic, 0): (43, "md"), (topic, 1): (42, "")}
        nothing = c.request(FETCH_OFFSETS, 5, {"group_id": group + "-never", "topics": None})
        assert (nothing.error_code, list(nothing.topics)) == (ErrorCode.NONE, [])


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


# --------------------------------------------------------------------------- describe / list


def test_describe_and_list_groups(shared: BrokerProcess, group: str) -> None:
    topic = group + ".t"
    simple = group + "-simple"
    with WireClient(shared.bootstrap) as c:
        make_topic(c, topic)
        j = stable_member(c, group, assignment=b"assigned")
        assert commit(c, simple, -1, "", topic, 1) == ErrorCode.NONE
        local_host = c.sock.getsockname()[0]
        for version in range(5):
            body = {"groups": [group, simple, group + "-unknown"], "include_authorized_operations": True}
            resp = c.request(DESCRIBE, version, body)
            stable, empty, dead = resp.groups
            assert (stable.error_code, stable.group_id, stable.group_state) == (0, group, "Stable")
            assert (stable.protocol_type, stable.protocol_data) == ("consumer", "range")
            [m] = stable.members
            assert (m.member_id, m.client_id, m.client_host) == (j.member_id, "wire-test", "/" + local_host)
            assert (m.member_metadata, m.member_assignment) == (b"meta", b"assigned")
            assert (empty.group_state, list(empty.members)) == ("Empty", [])
            assert (dead.error_code, dead.group_state, dead.protocol_type) == (0, "Dead", "")
            if version >= 3:
                assert stable.authorized_operations == INT32_MIN
            if version >= 4:
                assert m.group_instance_id is None
        for version in range(3):
            listed = c.request(LIST, version, {})
            assert listed.error_code == ErrorCode.NONE
            pairs = {(g.group_id, g.protocol_type) for g in listed.groups}
            assert {(group, "consumer"), (simple, "")} <= pairs

        # while a rebalance is prepared, members show without metadata (Kafka's summary rule)
        with WireClient(shared.bootstrap) as b:
            mid_b = member_id(b, group)
            cid = send_join(b, group, mid_b)
            wait_for(
                lambda: heartbeat(c, group, 1, j.member_id) == ErrorCode.REBALANCE_IN_PROGRESS, "rebalance"
            )
            g = c.request(DESCRIBE, 4, {"groups": [group], "include_authorized_operations": False}).groups[0]
            assert (g.group_state, g.protocol_data) == ("PreparingRebalance", "")
            assert sorted(m.member_id for m in g.members) == sorted([j.member_id, mid_b])
            assert {m.member_metadata for m in g.members} == {b""}
            join(c, group, j.member_id)
            receive(b, JOIN, 5, cid)


# --------------------------------------------------------------------------- configuration


def test_group_settings_have_kafkas_names(make_broker: Callable[..., BrokerProcess]) -> None:
    cfg = from_properties({})
    assert (cfg.group_min_session_timeout_ms, cfg.group_max_session_timeout_ms) == (6000, 1_800_000)
    assert cfg.group_initial_rebalance_delay_ms == 0  # Kafka: 3000; see hmb/config.py for why
    with pytest.raises(ConfigError, match=r"group\.max\.session\.timeout\.ms"):
        from_properties({"group.min.session.timeout.ms": "10000", "group.max.session.timeout.ms": "9000"})
    with pytest.raises(ConfigError, match=r"group\.initial\.rebalance\.delay\.ms"):
        from_properties({"group.initial.rebalance.delay.ms": "-1"})

    b = make_broker("group.initial.rebalance.delay.ms=1000", "group.max.session.timeout.ms=20000")
    with WireClient(b.bootstrap) as c:
        assert (
            c.request(JOIN, 5, join_body("g", session_ms=5000)).error_code
            == ErrorCode.INVALID_SESSION_TIMEOUT
        )
        assert (
            c.request(JOIN, 5, join_body("g", session_ms=30_000)).error_code
            == ErrorCode.INVALID_SESSION_TIMEOUT
        )
        mid = member_id(c, "g", session_ms=6000)
        start = time.monotonic()
        j = join(c, "g", mid, session_ms=6000)
        assert 0.9 < time.monotonic() - start < 5, "a new group waits group.initial.rebalance.delay.ms"
        assert j.generation_id == 1
