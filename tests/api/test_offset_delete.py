"""OffsetDelete v0 in process: a group's offsets for some partitions go, durably.

What can fail: the offsets of a topic a running consumer subscribes to
deleted under it, a deletion lost at restart (no tombstone), a refusal
that still deletes, unknown groups and partitions answered NONE.
"""

from __future__ import annotations

import struct
from typing import Any

from hmb.groups.offsets import OFFSET_KEY
from hmb.groups.subscription import SubscriptionFormatError, subscribed_topics
from kproto import ApiKey, ErrorCode

from .bodies import make_topic
from .groups import commit, fetch_offset, leave, stable_member
from .harness import InProcessBroker
from .test_delete_groups import offsets_log_tombstones

OFFSET_DELETE = ApiKey.OFFSET_DELETE


def subscription(*topics: str, version: int = 1) -> bytes:
    """Kafka's ConsumerProtocolSubscription (v1: with an empty owned-partitions list)."""
    out = struct.pack(">hi", version, len(topics))
    for t in topics:
        raw = t.encode()
        out += struct.pack(">h", len(raw)) + raw
    out += struct.pack(">i", -1)  # no user data
    if version >= 1:
        out += struct.pack(">i", 0)
    return out


async def offset_delete(b: InProcessBroker, group: str, partitions: dict[str, list[int]]) -> Any:
    body = {
        "group_id": group,
        "topics": [
            {"name": t, "partitions": [{"partition_index": p} for p in ps]} for t, ps in partitions.items()
        ],
    }
    resp = await b.request(OFFSET_DELETE, 0, body)
    assert resp.throttle_time_ms == 0
    return resp


def codes(resp: Any) -> dict[tuple[str, int], int]:
    return {(t.name, p.partition_index): p.error_code for t in resp.topics for p in t.partitions}


async def commit_all(
    b: InProcessBroker, group: str, topics: list[str], generation: int = -1, member: str = ""
) -> None:
    for t in topics:
        assert await commit(b, group, generation, member, t, 42) == ErrorCode.NONE


async def test_deletes_offsets_of_partitions_nobody_subscribes_to(group_broker: InProcessBroker) -> None:
    b = group_broker
    for t in ("read", "old", "other"):
        await make_topic(b, t)
    j = await stable_member(b, "g", protocols=(("range", subscription("read")),))
    await commit_all(b, "g", ["read", "old", "other"], j.generation_id, j.member_id)
    resp = await offset_delete(b, "g", {"read": [0], "old": [0, 1, 7], "ghost": [0]})
    assert resp.error_code == ErrorCode.NONE
    assert codes(resp) == {
        ("read", 0): ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC,
        ("old", 0): ErrorCode.NONE,
        ("old", 1): ErrorCode.NONE,  # nothing committed there: nothing to delete, still NONE
        ("old", 7): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ("ghost", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    }
    assert (await fetch_offset(b, "g", "read")).committed_offset == 42
    assert (await fetch_offset(b, "g", "old")).committed_offset == -1
    assert (await fetch_offset(b, "g", "other")).committed_offset == 42
    tombstones = offsets_log_tombstones(b)
    assert tombstones == [OFFSET_KEY.build({"version": 1, "group": "g", "topic": "old", "partition": 0})]
    b.restart()
    assert (await fetch_offset(b, "g", "old")).committed_offset == -1
    assert (await fetch_offset(b, "g", "read")).committed_offset == 42
    assert (await fetch_offset(b, "g", "other")).committed_offset == 42


async def test_once_the_members_leave_the_topic_may_go(group_broker: InProcessBroker) -> None:
    b = group_broker
    await make_topic(b, "read")
    j = await stable_member(b, "g", protocols=(("range", subscription("read", version=3)),))
    await commit_all(b, "g", ["read"], j.generation_id, j.member_id)
    assert codes(await offset_delete(b, "g", {"read": [0]})) == {
        ("read", 0): ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC
    }
    assert await leave(b, "g", j.member_id) == ErrorCode.NONE
    assert codes(await offset_delete(b, "g", {"read": [0]})) == {("read", 0): ErrorCode.NONE}
    assert (await fetch_offset(b, "g", "read")).committed_offset == -1


async def test_group_level_refusals_change_nothing(group_broker: InProcessBroker) -> None:
    b = group_broker
    await make_topic(b, "t")
    await commit_all(b, "simple", ["t"])
    for group, code in (("nobody", ErrorCode.GROUP_ID_NOT_FOUND), ("", ErrorCode.INVALID_GROUP_ID)):
        resp = await offset_delete(b, group, {"t": [0]})
        assert (resp.error_code, list(resp.topics)) == (code, [])
    # a running group of another protocol type: the broker cannot tell what it uses
    j = await stable_member(b, "connect", protocol_type="connect")
    await commit_all(b, "connect", ["t"], j.generation_id, j.member_id)
    resp = await offset_delete(b, "connect", {"t": [0]})
    assert (resp.error_code, list(resp.topics)) == (ErrorCode.NON_EMPTY_GROUP, [])
    assert (await fetch_offset(b, "connect", "t")).committed_offset == 42
    assert offsets_log_tombstones(b) == []
    # a group known by its offsets only has no subscriptions
    assert codes(await offset_delete(b, "simple", {"t": [0]})) == {("t", 0): ErrorCode.NONE}
    assert (await fetch_offset(b, "simple", "t")).committed_offset == -1


def test_subscription_reader() -> None:
    assert subscribed_topics(subscription("a", "bé", version=0)) == ["a", "bé"]
    assert subscribed_topics(subscription(version=3)) == []
    for bad in (
        b"",
        b"\x00",
        subscription("abc")[:9],
        b"\x00\x00\x7f\xff\xff\xff",
        b"\xff\xff\x00\x00\x00\x00",
    ):
        try:
            subscribed_topics(bad)
        except SubscriptionFormatError:
            continue
        raise AssertionError(f"{bad!r} was read as a subscription")


async def test_unreadable_metadata_subscribes_to_nothing(group_broker: InProcessBroker) -> None:
    b = group_broker
    await make_topic(b, "t")
    j = await stable_member(b, "odd", protocols=(("range", b"\x00\x01garbage"),))
    await commit_all(b, "odd", ["t"], j.generation_id, j.member_id)
    assert codes(await offset_delete(b, "odd", {"t": [0]})) == {("t", 0): ErrorCode.NONE}
