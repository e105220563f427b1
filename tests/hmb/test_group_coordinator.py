"""The group coordinator's state machine, in virtual time.

trio's MockClock with autojump makes session and rebalance timeouts pass
instantly when every task is blocked, so expiry is tested exactly, and
"completes without waiting" is checked as "no virtual time passed".
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
import trio
import trio.testing

from hmb.groups.coordinator import GroupCoordinator, GroupState, JoinResult
from kproto import ErrorCode

RANGE = [("range", b"meta-r")]
BOTH = [("range", b"meta-r"), ("roundrobin", b"meta-rr")]


def run(fn: Callable[[GroupCoordinator], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        coord = GroupCoordinator()
        async with trio.open_nursery() as nursery:
            await nursery.start(coord.run)
            result = await fn(coord)
            nursery.cancel_scope.cancel()
        return result

    return trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


async def join(
    coord: GroupCoordinator, member: str = "", protocols: list[tuple[str, bytes]] = RANGE, **kw: Any
) -> JoinResult:
    kw.setdefault("session_timeout_ms", 10_000)
    kw.setdefault("rebalance_timeout_ms", 30_000)
    return await coord.join("g", member, "consumer", protocols, **kw)


def test_a_lone_member_becomes_leader_at_once() -> None:
    async def scenario(coord: GroupCoordinator) -> None:
        start = trio.current_time()
        r = await join(coord, client_id="c1")
        assert trio.current_time() == start, "a rebalance with every member present must not wait"
        assert (r.error, r.generation_id, r.protocol_name, r.leader) == (0, 1, "range", r.member_id)
        assert r.members == ((r.member_id, b"meta-r"),)
        err, assignment = await coord.sync("g", 1, r.member_id, [(r.member_id, b"parts")])
        assert (err, assignment) == (0, b"parts")
        assert coord.groups["g"].state == GroupState.STABLE
        assert coord.heartbeat("g", 1, r.member_id) == ErrorCode.NONE

    run(scenario)


def test_member_id_required_then_rejoin() -> None:
    async def scenario(coord: GroupCoordinator) -> None:
        first = await join(coord, require_known_member_id=True)
        assert first.error == ErrorCode.MEMBER_ID_REQUIRED and first.member_id
        second = await join(coord, first.member_id, require_known_member_id=True)
        assert second.error == 0 and second.member_id == first.member_id
        assert (await join(coord, "made-up-id")).error == ErrorCode.UNKNOWN_MEMBER_ID

    run(scenario)


def test_a_second_member_triggers_a_rebalance_that_completes_when_both_rejoin() -> None:
    async def scenario(coord: GroupCoordinator) -> None:
        a = await join(coord, client_id="a")
        await coord.sync("g", 1, a.member_id, [(a.member_id, b"all")])
        results: dict[str, JoinResult] = {}
        async with trio.open_nursery() as nursery:

            async def join_b() -> None:
                results["b"] = await join(coord, client_id="b")

            nursery.start_soon(join_b)
            await trio.testing.wait_all_tasks_blocked()
            assert coord.heartbeat("g", 1, a.member_id) == ErrorCode.REBALANCE_IN_PROGRESS
            start = trio.current_time()
            results["a"] = await join(coord, a.member_id)
            assert trio.current_time() == start
        ra, rb = results["a"], results["b"]
        assert ra.generation_id == rb.generation_id == 2
        assert ra.leader == a.member_id and len(ra.members) == 2 and rb.members == ()
        # the follower's sync waits for the leader's
        async with trio.open_nursery() as nursery:
            got: list[tuple[int, bytes]] = []

            async def sync_b() -> None:
                got.append(await coord.sync("g", 2, rb.member_id, []))

            nursery.start_soon(sync_b)
            await trio.testing.wait_all_tasks_blocked()
            assert not got
            await coord.sync("g", 2, a.member_id, [(a.member_id, b"p0"), (rb.member_id, b"p1")])
        assert got == [(0, b"p1")]

    run(scenario)


def test_session_expiry_removes_a_silent_member() -> None:
    async def scenario(coord: GroupCoordinator) -> None:
        a = await join(coord, session_timeout_ms=6000)
        await coord.sync("g", 1, a.member_id, [])
        start = trio.current_time()
        while coord.groups["g"].members:  # nobody heartbeats: virtual time jumps to the expiry
            await trio.sleep(1)
        assert 6 <= trio.current_time() - start <= 7
        assert coord.groups["g"].state == GroupState.EMPTY
        assert coord.heartbeat("g", 1, a.member_id) == ErrorCode.UNKNOWN_MEMBER_ID

    run(scenario)


def test_members_that_do_not_rejoin_are_dropped_at_the_rebalance_timeout() -> None:
    async def scenario(coord: GroupCoordinator) -> None:
        a = await join(coord, rebalance_timeout_ms=5000, session_timeout_ms=60_000)
        await coord.sync("g", 1, a.member_id, [])
        start = trio.current_time()
        b = await join(coord, rebalance_timeout_ms=5000, session_timeout_ms=60_000)  # a never rejoins
        assert 5 <= trio.current_time() - start <= 6
        assert b.error == 0 and b.leader == b.member_id and list(coord.groups["g"].members) == [b.member_id]

    run(scenario)


def test_leave_rebalances_the_rest() -> None:
    async def scenario(coord: GroupCoordinator) -> None:
        a = await join(coord)
        await coord.sync("g", 1, a.member_id, [])
        async with trio.open_nursery() as nursery:
            nursery.start_soon(join, coord)
            await trio.testing.wait_all_tasks_blocked()
            await join(coord, a.member_id)
        assert coord.leave("g", a.member_id) == ErrorCode.NONE
        assert coord.groups["g"].state == GroupState.PREPARING_REBALANCE
        assert coord.leave("g", a.member_id) == ErrorCode.UNKNOWN_MEMBER_ID

    run(scenario)


def test_protocol_selection_and_inconsistent_protocols() -> None:
    async def scenario(coord: GroupCoordinator) -> None:
        a = await join(coord, protocols=[("roundrobin", b"x"), ("range", b"y")])
        async with trio.open_nursery() as nursery:
            res: list[JoinResult] = []

            async def join_b() -> None:
                res.append(await join(coord, protocols=[("range", b"z")]))

            nursery.start_soon(join_b)
            await trio.testing.wait_all_tasks_blocked()
            ra = await join(coord, a.member_id, protocols=[("roundrobin", b"x"), ("range", b"y")])
        assert ra.protocol_name == res[0].protocol_name == "range"
        bad = await join(coord, protocols=[("sticky", b"")])
        assert bad.error == ErrorCode.INCONSISTENT_GROUP_PROTOCOL

    run(scenario)


def test_generation_and_commit_checks() -> None:
    async def scenario(coord: GroupCoordinator) -> None:
        assert coord.check_commit("g", -1, "") == ErrorCode.NONE  # no group yet: simple commit
        a = await join(coord)
        await coord.sync("g", 1, a.member_id, [])
        assert coord.check_commit("g", 1, a.member_id) == ErrorCode.NONE
        assert coord.check_commit("g", 7, a.member_id) == ErrorCode.ILLEGAL_GENERATION
        assert coord.check_commit("g", 1, "stranger") == ErrorCode.UNKNOWN_MEMBER_ID
        assert coord.check_commit("g", -1, "") == ErrorCode.UNKNOWN_MEMBER_ID  # group has members (Kafka 3)
        assert coord.check_commit("other", 3, "x") == ErrorCode.ILLEGAL_GENERATION  # no such group
        assert coord.heartbeat("g", 7, a.member_id) == ErrorCode.ILLEGAL_GENERATION
        assert (await coord.sync("g", 7, a.member_id, []))[0] == ErrorCode.ILLEGAL_GENERATION

    run(scenario)


@pytest.mark.parametrize("timeout_ms", [1000, 3_600_000])
def test_session_timeout_bounds(timeout_ms: int) -> None:
    async def scenario(coord: GroupCoordinator) -> None:
        assert (await join(coord, session_timeout_ms=timeout_ms)).error == ErrorCode.INVALID_SESSION_TIMEOUT

    run(scenario)


def test_members_of_the_generation_may_commit_while_a_rebalance_is_prepared() -> None:
    """Consumers commit before they rejoin (on revoke): Kafka allows it in PreparingRebalance."""

    async def scenario(coord: GroupCoordinator) -> None:
        a = await join(coord)
        await coord.sync("g", 1, a.member_id, [])
        async with trio.open_nursery() as nursery:
            nursery.start_soon(join, coord)
            await trio.testing.wait_all_tasks_blocked()
            assert coord.groups["g"].state == GroupState.PREPARING_REBALANCE
            assert coord.check_commit("g", 1, a.member_id) == ErrorCode.NONE
            await join(coord, a.member_id)
        assert coord.groups["g"].state == GroupState.COMPLETING_REBALANCE
        assert coord.check_commit("g", 2, a.member_id) == ErrorCode.REBALANCE_IN_PROGRESS
        assert coord.check_commit("g", 1, a.member_id) == ErrorCode.ILLEGAL_GENERATION

    run(scenario)


def test_an_abandoned_join_blocks_a_rebalance_for_one_session_timeout_only() -> None:
    """Members that are gone (one abandoned its JoinGroup, one went silent) are dropped after one
    session timeout (6 s), long before the rebalance timeout (300 s)."""

    async def scenario(coord: GroupCoordinator) -> None:
        kw: dict[str, Any] = {"session_timeout_ms": 6000, "rebalance_timeout_ms": 300_000}
        a = await join(coord, **kw)
        await coord.sync("g", 1, a.member_id, [])
        got: dict[str, JoinResult] = {}
        async with trio.open_nursery() as nursery:

            async def join_as(name: str, member: str = "") -> None:
                got[name] = await join(coord, member, **kw)

            nursery.start_soon(join_as, "b")
            await trio.testing.wait_all_tasks_blocked()
            await join_as("a", a.member_id)
        b = got["b"]
        await coord.sync("g", 2, a.member_id, [])
        await coord.sync("g", 2, b.member_id, [])
        start = trio.current_time()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(join_as, "c")
            await trio.testing.wait_all_tasks_blocked()
            with trio.CancelScope() as gone:  # a rejoins, then its connection drops; b is silent
                gone.deadline = trio.current_time() + 1
                await join(coord, a.member_id, **kw)
            assert gone.cancelled_caught
        assert 5 <= trio.current_time() - start <= 8
        c = got["c"]
        assert (c.error, c.leader, list(coord.groups["g"].members)) == (0, c.member_id, [c.member_id])

    run(scenario)


def test_a_resent_join_shares_the_result_of_the_first() -> None:
    async def scenario(coord: GroupCoordinator) -> None:
        a = await join(coord)
        await coord.sync("g", 1, a.member_id, [])
        got: list[JoinResult] = []
        async with trio.open_nursery() as nursery:

            async def rejoin() -> None:
                got.append(await join(coord, a.member_id))

            nursery.start_soon(join, coord)  # b makes the group rebalance
            await trio.testing.wait_all_tasks_blocked()
            nursery.start_soon(rejoin)
            nursery.start_soon(rejoin)
        assert len(got) == 2 and got[0] == got[1] and got[0].generation_id == 2

    run(scenario)


def test_initial_rebalance_delay_waits_for_more_members() -> None:
    async def scenario(coord: GroupCoordinator) -> None:
        coord.initial_rebalance_delay_s = 3.0
        start = trio.current_time()
        got: list[JoinResult] = []
        async with trio.open_nursery() as nursery:

            async def join_one() -> None:
                got.append(await join(coord))

            nursery.start_soon(join_one)
            await trio.sleep(2)
            nursery.start_soon(join_one)  # a newcomer extends the delay by another 3 s
        assert 5 <= trio.current_time() - start <= 5.5
        assert got[0].generation_id == got[1].generation_id == 1
        assert len(coord.groups["g"].members) == 2

    run(scenario)


def test_a_follower_waiting_in_sync_does_not_expire() -> None:
    async def scenario(coord: GroupCoordinator) -> None:
        kw: dict[str, Any] = {"session_timeout_ms": 6000}
        a = await join(coord, **kw)
        await coord.sync("g", 1, a.member_id, [])
        got: dict[str, Any] = {}
        async with trio.open_nursery() as nursery:

            async def join_b() -> None:
                got["b"] = await join(coord, **kw)
                got["sync"] = await coord.sync("g", 2, got["b"].member_id, [])

            nursery.start_soon(join_b)
            await trio.testing.wait_all_tasks_blocked()
            await join(coord, a.member_id, **kw)
            for _ in range(4):  # the leader takes 20 s to assign; it heartbeats, b waits in sync
                await trio.sleep(5)
                assert coord.heartbeat("g", 2, a.member_id) == ErrorCode.NONE
            await coord.sync("g", 2, a.member_id, [(got["b"].member_id, b"x")])
        assert got["sync"] == (0, b"x")

    run(scenario)
