"""Consumer-group requests over a real connection, for the system tests that need a socket.

The long-polls (JoinGroup, SyncGroup) are driven by pipelining: a request is
sent on one connection and its answer read after other members have acted,
so no test needs threads.  Waits are bounded and wait on a condition (a
response arriving), never on a guessed sleep.  (The group protocol itself is
tested in process, in ``tests/api``.)
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from wire import WireClient, metadata_body

import kproto
from kproto import ApiKey, ErrorCode

JOIN, SYNC, HEARTBEAT, LEAVE = ApiKey.JOIN_GROUP, ApiKey.SYNC_GROUP, ApiKey.HEARTBEAT, ApiKey.LEAVE_GROUP
LIST = ApiKey.LIST_GROUPS
COMMIT, FETCH_OFFSETS, METADATA = ApiKey.OFFSET_COMMIT, ApiKey.OFFSET_FETCH, ApiKey.METADATA


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
