"""Consumer-group requests the group API tests share (JoinGroup, SyncGroup, ..., OffsetFetch).

Each member is one :class:`hmb.api.context.Session`, as each client is one
connection.  The long-polls (JoinGroup, SyncGroup) of one member run with
:func:`harness.in_background` while the other members act; waits are
bounded and wait on a condition (an answer, a heartbeat's error), never on a
guessed sleep.  Session timeouts are short: the ``group_broker`` fixture allows
``group.min.session.timeout.ms=100``.
"""

from __future__ import annotations

from typing import Any

from hmb.api.context import Session
from kproto import ApiKey, ErrorCode

from .harness import InProcessBroker

JOIN, SYNC, HEARTBEAT, LEAVE = ApiKey.JOIN_GROUP, ApiKey.SYNC_GROUP, ApiKey.HEARTBEAT, ApiKey.LEAVE_GROUP
DESCRIBE, LIST = ApiKey.DESCRIBE_GROUPS, ApiKey.LIST_GROUPS
COMMIT, FETCH_OFFSETS = ApiKey.OFFSET_COMMIT, ApiKey.OFFSET_FETCH
INT32_MIN = -(2**31)


def client(port: int) -> Session:
    """A member's connection, from 127.0.0.1:<port> (Kafka reports its host as /127.0.0.1)."""
    return Session(f"127.0.0.1:{port}")


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
        "reason": None,
    }


async def member_id(b: InProcessBroker, group: str, version: int = 5, **kw: Any) -> str:
    """The member id for a first join: v4+ hand it out with MEMBER_ID_REQUIRED."""
    if version < 4:
        return ""
    first = await b.request(JOIN, version, join_body(group, **kw))
    assert first.error_code == ErrorCode.MEMBER_ID_REQUIRED and first.member_id
    assert (first.generation_id, first.leader, list(first.members)) == (-1, "", [])
    return str(first.member_id)


async def join_request(
    b: InProcessBroker,
    group: str,
    member: str,
    version: int = 5,
    *,
    session: Session | None = None,
    **kw: Any,
) -> Any:
    """A JoinGroup's answer, whatever its error (run it in the background when it must wait)."""
    return await b.request(JOIN, version, join_body(group, member, **kw), session=session)


async def join(
    b: InProcessBroker,
    group: str,
    member: str | None = None,
    version: int = 5,
    *,
    session: Session | None = None,
    **kw: Any,
) -> Any:
    """A join that needs nobody else (a new group, or every other member already waiting)."""
    if member is None:
        member = await member_id(b, group, version, **kw)
    resp = await join_request(b, group, member, version, session=session, **kw)
    assert resp.error_code == ErrorCode.NONE, ErrorCode(resp.error_code).name
    return resp


def sync_body(
    group: str, generation: int, member: str, assignments: dict[str, bytes] | None = None
) -> dict[str, Any]:
    """A SyncGroup request; v5+ name the protocol the ``join_body`` defaults choose."""
    return {
        "group_id": group,
        "generation_id": generation,
        "member_id": member,
        "group_instance_id": None,
        "protocol_type": "consumer",
        "protocol_name": "range",
        "assignments": [{"member_id": m, "assignment": a} for m, a in (assignments or {}).items()],
    }


async def sync(
    b: InProcessBroker,
    group: str,
    generation: int,
    member: str,
    assignments: dict[str, bytes] | None = None,
    version: int = 3,
    *,
    session: Session | None = None,
) -> Any:
    return await b.request(SYNC, version, sync_body(group, generation, member, assignments), session=session)


async def heartbeat(b: InProcessBroker, group: str, generation: int, member: str, version: int = 3) -> int:
    body = {"group_id": group, "generation_id": generation, "member_id": member, "group_instance_id": None}
    return int((await b.request(HEARTBEAT, version, body)).error_code)


async def leave(b: InProcessBroker, group: str, member: str, version: int = 2) -> int:
    return int((await b.request(LEAVE, version, {"group_id": group, "member_id": member})).error_code)


async def stable_member(b: InProcessBroker, group: str, assignment: bytes = b"all", **kw: Any) -> Any:
    """A lone member that joined and synced: returns the JoinGroup response."""
    j = await join(b, group, **kw)
    assert j.leader == j.member_id and j.generation_id >= 1
    s = await sync(b, group, j.generation_id, j.member_id, {j.member_id: assignment})
    assert (s.error_code, s.assignment) == (ErrorCode.NONE, assignment)
    return j


def commit_body(
    group: str, generation: int, member: str, topic: str, offset: int, **extra: Any
) -> dict[str, Any]:
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


async def commit(
    b: InProcessBroker, group: str, generation: int, member: str, topic: str, offset: int, version: int = 7
) -> int:
    body = commit_body(group, generation, member, topic, offset)
    return int((await b.request(COMMIT, version, body)).topics[0].partitions[0].error_code)


def fetch_offsets_body(group: str, topics: list[dict[str, Any]] | None, version: int) -> dict[str, Any]:
    """An OffsetFetch request for one group: v8+ name it in the ``groups`` batch."""
    if version < 8:
        return {"group_id": group, "topics": topics, "require_stable": False}
    return {
        "groups": [{"group_id": group, "member_id": None, "member_epoch": -1, "topics": topics}],
        "require_stable": False,
    }


def fetched_topics(resp: Any, version: int) -> Any:
    """The topics of the first group an OffsetFetch answer describes (v8+: its ``groups`` batch)."""
    return resp.topics if version < 8 else resp.groups[0].topics


async def fetch_offset(
    b: InProcessBroker, group: str, topic: str, version: int = 5, partition: int = 0
) -> Any:
    body = fetch_offsets_body(group, [{"name": topic, "partition_indexes": [partition]}], version)
    return fetched_topics(await b.request(FETCH_OFFSETS, version, body), version)[0].partitions[0]


async def told_to_rebalance(b: InProcessBroker, group: str, generation: int, member: str) -> bool:
    """True when ``member``'s heartbeat answers REBALANCE_IN_PROGRESS (a rebalance is prepared)."""
    return await heartbeat(b, group, generation, member) == ErrorCode.REBALANCE_IN_PROGRESS
