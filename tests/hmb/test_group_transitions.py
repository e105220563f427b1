"""The group state table, walked through the coordinator's API.

Each scenario drives the coordinator with JoinGroup/SyncGroup/LeaveGroup
calls (in virtual time) and states the exact transitions it expects; the
scenarios together take every transition of the table, so no row is dead.
Pairs outside the table raise, and nothing but ``GroupCoordinator._fire``
assigns a group's state.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

import hmb.groups
from hmb.groups import coordinator as coordinator_module
from hmb.groups.coordinator import Group, GroupCoordinator, JoinResult
from hmb.groups.states import (
    TRANSITIONS,
    Action,
    GroupEvent,
    GroupState,
    IllegalTransitionError,
    Transition,
    transition,
)

EMPTY = GroupState.EMPTY
PREPARING = GroupState.PREPARING_REBALANCE
COMPLETING = GroupState.COMPLETING_REBALANCE
STABLE = GroupState.STABLE
JOIN = GroupEvent.JOIN
GONE = GroupEvent.MEMBER_GONE
LAST_GONE = GroupEvent.LAST_MEMBER_GONE
ALL_JOINED = GroupEvent.ALL_JOINED
SYNCED = GroupEvent.LEADER_SYNCED

RANGE = [("range", b"meta-r")]
BOTH = [("range", b"meta-r"), ("roundrobin", b"meta-rr")]

Step = tuple[GroupState, GroupEvent]


async def join(
    coord: GroupCoordinator, member: str = "", protocols: list[tuple[str, bytes]] = RANGE
) -> JoinResult:
    return await coord.join(
        "g", member, "consumer", protocols, session_timeout_ms=10_000, rebalance_timeout_ms=30_000
    )


async def join_meanwhile(coord: GroupCoordinator, nursery: trio.Nursery, got: list[JoinResult]) -> None:
    """A new member's JoinGroup, left waiting for its rebalance."""

    async def run() -> None:
        got.append(await join(coord))

    nursery.start_soon(run)
    await trio.testing.wait_all_tasks_blocked()


async def stable_pair(coord: GroupCoordinator) -> tuple[str, str]:
    """Two members a (leader) and b of a Stable group, generation 2."""
    a = await join(coord)
    await coord.sync("g", 1, a.member_id, [])
    got: list[JoinResult] = []
    async with trio.open_nursery() as nursery:
        await join_meanwhile(coord, nursery, got)
        await join(coord, a.member_id)
    b = got[0]
    await coord.sync("g", 2, a.member_id, [(b.member_id, b"x")])
    return a.member_id, b.member_id


# ---------------------------------------------------------------- scenarios


async def one_member_comes_and_goes(coord: GroupCoordinator) -> None:
    a = await join(coord)
    await coord.sync("g", a.generation_id, a.member_id, [])
    coord.leave("g", a.member_id)


async def the_only_member_leaves_before_its_sync(coord: GroupCoordinator) -> None:
    a = await join(coord)
    coord.leave("g", a.member_id)


async def a_member_rejoins_with_new_protocols_before_its_sync(coord: GroupCoordinator) -> None:
    a = await join(coord, protocols=RANGE)
    await join(coord, a.member_id, protocols=BOTH)


async def a_newcomer_rebalances_a_stable_group(coord: GroupCoordinator) -> None:
    await stable_pair(coord)


async def members_leave_a_stable_group_one_by_one(coord: GroupCoordinator) -> None:
    a, b = await stable_pair(coord)
    coord.leave("g", a)
    coord.leave("g", b)


async def a_member_leaves_while_a_rebalance_is_prepared(coord: GroupCoordinator) -> None:
    a, b = await stable_pair(coord)
    got: list[JoinResult] = []
    async with trio.open_nursery() as nursery:
        await join_meanwhile(coord, nursery, got)
        coord.leave("g", a)
        await join(coord, b)


async def a_member_leaves_between_join_and_sync(coord: GroupCoordinator) -> None:
    a = await join(coord)
    await coord.sync("g", 1, a.member_id, [])
    got: list[JoinResult] = []
    async with trio.open_nursery() as nursery:
        await join_meanwhile(coord, nursery, got)
        await join(coord, a.member_id)
    coord.leave("g", got[0].member_id)
    await join(coord, a.member_id)


async def a_stable_groups_only_member_expires(coord: GroupCoordinator) -> None:
    a = await join(coord)
    await coord.sync("g", 1, a.member_id, [])
    while coord.groups["g"].members:
        await trio.sleep(1)


#: what :func:`stable_pair` takes
STABLE_PAIR: list[Step] = [
    (EMPTY, JOIN),
    (PREPARING, ALL_JOINED),
    (COMPLETING, SYNCED),
    (STABLE, JOIN),
    (PREPARING, JOIN),
    (PREPARING, ALL_JOINED),
    (COMPLETING, SYNCED),
]

SCENARIOS: dict[Callable[[GroupCoordinator], Awaitable[None]], list[Step]] = {
    one_member_comes_and_goes: [
        (EMPTY, JOIN),
        (PREPARING, ALL_JOINED),
        (COMPLETING, SYNCED),
        (STABLE, LAST_GONE),
    ],
    the_only_member_leaves_before_its_sync: [(EMPTY, JOIN), (PREPARING, ALL_JOINED), (COMPLETING, LAST_GONE)],
    a_member_rejoins_with_new_protocols_before_its_sync: [
        (EMPTY, JOIN),
        (PREPARING, ALL_JOINED),
        (COMPLETING, JOIN),
        (PREPARING, ALL_JOINED),
    ],
    a_newcomer_rebalances_a_stable_group: STABLE_PAIR,
    members_leave_a_stable_group_one_by_one: [*STABLE_PAIR, (STABLE, GONE), (PREPARING, LAST_GONE)],
    a_member_leaves_while_a_rebalance_is_prepared: [
        *STABLE_PAIR,
        (STABLE, JOIN),
        (PREPARING, GONE),
        (PREPARING, JOIN),
        (PREPARING, ALL_JOINED),
    ],
    a_member_leaves_between_join_and_sync: [
        (EMPTY, JOIN),
        (PREPARING, ALL_JOINED),
        (COMPLETING, SYNCED),
        (STABLE, JOIN),
        (PREPARING, JOIN),
        (PREPARING, ALL_JOINED),
        (COMPLETING, GONE),
        (PREPARING, JOIN),
        (PREPARING, ALL_JOINED),
    ],
    a_stable_groups_only_member_expires: [
        (EMPTY, JOIN),
        (PREPARING, ALL_JOINED),
        (COMPLETING, SYNCED),
        (STABLE, LAST_GONE),
    ],
}


def record_transitions(
    scenario: Callable[[GroupCoordinator], Awaitable[None]], monkeypatch: pytest.MonkeyPatch
) -> list[Step]:
    """The (state, event) pairs the coordinator looks up while ``scenario`` runs."""
    taken: list[Step] = []

    def recording(group_id: str, state: GroupState, event: GroupEvent) -> Transition:
        taken.append((state, event))
        return transition(group_id, state, event)

    monkeypatch.setattr(coordinator_module, "transition", recording)

    async def main() -> None:
        coord = GroupCoordinator()
        async with trio.open_nursery() as nursery:
            await nursery.start(coord.run)
            await scenario(coord)
            nursery.cancel_scope.cancel()

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    return taken


@pytest.mark.parametrize("scenario", list(SCENARIOS), ids=lambda s: s.__name__)
def test_scenario_takes_the_expected_transitions(
    scenario: Callable[[GroupCoordinator], Awaitable[None]], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert record_transitions(scenario, monkeypatch) == SCENARIOS[scenario]


def test_the_scenarios_take_every_transition_of_the_table() -> None:
    walked = {step for steps in SCENARIOS.values() for step in steps}
    assert walked == set(TRANSITIONS)


def test_every_action_is_used_and_dead_is_never_entered() -> None:
    assert {t.action for t in TRANSITIONS.values()} == set(Action)
    assert all(GroupState.DEAD not in (state, t.target) for (state, _), t in TRANSITIONS.items())


@pytest.mark.parametrize(
    ("state", "event"),
    [pair for pair in itertools.product(GroupState, GroupEvent) if pair not in TRANSITIONS],
    ids=lambda x: x.name,
)
def test_a_transition_outside_the_table_raises(state: GroupState, event: GroupEvent) -> None:
    with pytest.raises(IllegalTransitionError):
        transition("g", state, event)


def test_the_coordinator_refuses_an_unlisted_transition_and_keeps_the_state() -> None:
    async def main() -> None:
        coord = GroupCoordinator()
        g = coord.groups["g"] = Group("g")
        with pytest.raises(IllegalTransitionError, match="no transition from Empty on 'leader synced'"):
            coord._fire(g, GroupEvent.LEADER_SYNCED)
        assert g.state == GroupState.EMPTY

    trio.run(main)


def _is_group_state(target: ast.expr) -> bool:
    """``<group>.state`` (an object's own ``self.state``, e.g. an exception's, is another thing)."""
    return (
        isinstance(target, ast.Attribute)
        and target.attr == "state"
        and not (isinstance(target.value, ast.Name) and target.value.id == "self")
    )


def test_only_fire_assigns_a_group_state() -> None:
    """The table is the whole state machine only if no other code sets ``.state``."""
    assigners = []
    for path in Path(hmb.groups.__file__).parent.glob("*.py"):
        tree = ast.parse(path.read_text())
        for func in ast.walk(tree):
            if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(func):
                targets: list[Any] = []
                if isinstance(node, ast.Assign):
                    targets = node.targets
                elif isinstance(node, ast.AugAssign | ast.AnnAssign):
                    targets = [node.target]
                if any(_is_group_state(t) for t in targets):
                    assigners.append(f"{path.name}:{func.name}")
    assert assigners == ["coordinator.py:_fire"]
