"""DeleteGroups v0-v2 in process: Empty groups and their offsets go, durably.

v1 and v2 change nothing the broker answers (v2 is the flexible encoding).
What can fail: a group with members deleted, offsets that come back after
a restart (no tombstones written), a deleted group still listed, an
unknown group answered NONE.
"""

from __future__ import annotations

import pytest

from hmb.groups.offsets import GROUP_METADATA_KEY, OFFSET_KEY, TOPIC
from kproto import ApiKey, ErrorCode
from kproto.records import read_records

from .bodies import make_topic
from .groups import LIST, commit, fetch_offset, leave, stable_member
from .harness import InProcessBroker

DELETE_GROUPS = ApiKey.DELETE_GROUPS


async def delete_groups(b: InProcessBroker, version: int, *groups: str) -> dict[str, int]:
    resp = await b.request(DELETE_GROUPS, version, {"groups_names": list(groups)})
    assert resp.throttle_time_ms == 0
    return {r.group_id: r.error_code for r in resp.results}


async def listed(b: InProcessBroker) -> set[str]:
    return {g.group_id for g in (await b.request(LIST, 2, {})).groups}


def offsets_log_tombstones(b: InProcessBroker) -> list[bytes]:
    """The keys of the null-valued records in ``__consumer_offsets``."""
    plog = b.broker.logs.get(TOPIC, 0)
    assert plog is not None
    with plog.read(plog.log_start_offset, 1 << 20) as region:
        data = region.read() if region is not None else b""
    return [r.key for r in read_records(data) if r.value is None and r.key is not None]


@pytest.mark.parametrize("version", range(3))
async def test_deletes_an_empty_group_and_its_offsets(group_broker: InProcessBroker, version: int) -> None:
    b = group_broker
    await make_topic(b, "t")
    j = await stable_member(b, "g")
    assert await commit(b, "g", j.generation_id, j.member_id, "t", 7) == ErrorCode.NONE
    assert await commit(b, "simple", -1, "", "t", 3) == ErrorCode.NONE  # a group known by offsets only
    assert await leave(b, "g", j.member_id) == ErrorCode.NONE
    assert await delete_groups(b, version, "g", "simple", "nobody", "") == {
        "g": ErrorCode.NONE,
        "simple": ErrorCode.NONE,
        "nobody": ErrorCode.GROUP_ID_NOT_FOUND,
        "": ErrorCode.INVALID_GROUP_ID,
    }
    for group in ("g", "simple"):
        assert (await fetch_offset(b, group, "t")).committed_offset == -1
    assert {"g", "simple"}.isdisjoint(await listed(b))
    assert await delete_groups(b, version, "g") == {"g": ErrorCode.GROUP_ID_NOT_FOUND}
    # Kafka's tombstones: one per offset, and the group metadata key
    tombstones = offsets_log_tombstones(b)
    assert OFFSET_KEY.build({"version": 1, "group": "g", "topic": "t", "partition": 0}) in tombstones
    assert GROUP_METADATA_KEY.build({"version": 2, "group": "g"}) in tombstones
    b.restart()
    for group in ("g", "simple"):
        assert (await fetch_offset(b, group, "t")).committed_offset == -1
    assert {"g", "simple"}.isdisjoint(await listed(b))


async def test_a_group_with_members_is_not_deleted(group_broker: InProcessBroker) -> None:
    b = group_broker
    await make_topic(b, "t")
    j = await stable_member(b, "busy")
    assert await commit(b, "busy", j.generation_id, j.member_id, "t", 5) == ErrorCode.NONE
    assert await delete_groups(b, 2, "busy") == {"busy": ErrorCode.NON_EMPTY_GROUP}
    assert (await fetch_offset(b, "busy", "t")).committed_offset == 5
    assert "busy" in await listed(b)
    assert offsets_log_tombstones(b) == []
    # the member carries on as before
    assert await commit(b, "busy", j.generation_id, j.member_id, "t", 6) == ErrorCode.NONE


async def test_a_deleted_group_starts_afresh(group_broker: InProcessBroker) -> None:
    b = group_broker
    await make_topic(b, "t")
    j = await stable_member(b, "again")
    assert await leave(b, "again", j.member_id) == ErrorCode.NONE
    assert await delete_groups(b, 1, "again") == {"again": ErrorCode.NONE}
    j2 = await stable_member(b, "again")
    assert j2.generation_id == 1  # a new group, not the old one's next generation
    assert await commit(b, "again", j2.generation_id, j2.member_id, "t", 9) == ErrorCode.NONE
    b.restart()
    assert (await fetch_offset(b, "again", "t")).committed_offset == 9  # a commit after the tombstones stays
