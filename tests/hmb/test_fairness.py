"""The fair gate's order (hmb.net.fairness), with trio tasks standing in for connections.

Each "connection" is a task passing the gate before each of its requests,
as :class:`hmb.net.connection.Connection` does; a request's "work" is one
checkpoint.  The log of admissions is the order the broker would handle
them in.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import trio

from hmb.net.fairness import FairGate, Flow


async def _pass(gate: FairGate, flow: Flow, control: bool = False) -> None:
    while not gate.admit_now(flow, control):
        if gate.alone(flow):  # alone at the gate: a checkpoint renews the turn
            await trio.lowlevel.checkpoint()
            continue
        await gate.wait_turn(flow, control)
        break


@asynccontextmanager
async def _bounded_nursery() -> AsyncIterator[trio.Nursery]:
    """A nursery that a failing test cannot leave hanging (the gate's task runs forever)."""
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            try:
                yield nursery
            finally:
                nursery.cancel_scope.cancel()


async def _until(condition, limit: int = 10_000) -> None:  # type: ignore[no-untyped-def]
    """Let other tasks run until ``condition()`` holds (bounded: no sleeps)."""
    for _ in range(limit):
        if condition():
            return
        await trio.lowlevel.checkpoint()
    raise AssertionError("condition never held")


def _latecomer_among(
    per_turn: int, connections: int, requests: int, busy: Callable[[FairGate, int], bool], control: bool
) -> tuple[int, int, list[str]]:
    """``connections`` connections pass the gate ``requests`` times each, all starting at once;
    once ``busy(gate, admitted so far)`` holds, a connection new at the gate sends one request.

    Returns how many requests waited when it came, how many were admitted between its arrival
    and its own admission, and the order of every admission."""
    log: list[str] = []
    seen: list[int] = []

    async def connection(gate: FairGate, name: str) -> None:
        flow = Flow()
        for i in range(requests):
            await _pass(gate, flow)
            log.append(f"{name}/{i}")
            await trio.lowlevel.checkpoint()  # the request's work

    async def main() -> None:
        gate = FairGate(per_turn)
        async with _bounded_nursery() as nursery:
            nursery.start_soon(gate.run)
            for n in range(connections):
                nursery.start_soon(connection, gate, f"c{n}")
            await _until(lambda: busy(gate, len(log)))
            seen[:] = [gate.waiting, len(log)]
            await _pass(gate, Flow(), control)
            log.append("latecomer")
            await _until(lambda: len(log) == connections * requests + 1)
            nursery.cancel_scope.cancel()

    trio.run(main)
    queued, arrived = seen
    return queued, log.index("latecomer") - arrived, log


def test_a_sparse_connection_overtakes_the_queued_heavy_ones() -> None:
    per_turn = 2
    queued, admitted_before, _ = _latecomer_among(
        per_turn, 30, 20, lambda gate, admitted: gate.waiting >= 25 and admitted >= 60, control=False
    )  # a busy broker: heavy ones queue
    assert queued >= 25
    # at most the turns already under way (and the few that turned sparse at a round's end)
    assert admitted_before <= 3 * per_turn
    assert admitted_before < queued - 15  # so most queued heavy requests went after it


def test_no_connection_starves_behind_a_stream_of_new_ones() -> None:
    """New connections keep coming (each sparse once); a heavy one still gets a turn each round."""
    per_turn = 2
    log: list[str] = []
    waited: list[int] = []  # admissions of others between a heavy request's arrival and its own

    async def heavy(gate: FairGate, requests: int) -> None:
        flow = Flow()
        for _ in range(requests):
            arrived = len(log)
            await _pass(gate, flow)
            waited.append(len(log) - arrived)
            log.append("heavy")
            await trio.lowlevel.checkpoint()

    async def newcomer(gate: FairGate) -> None:
        await _pass(gate, Flow())
        log.append("new")
        await trio.lowlevel.checkpoint()

    async def main() -> None:
        gate = FairGate(per_turn)
        async with _bounded_nursery() as nursery:
            nursery.start_soon(gate.run)
            nursery.start_soon(heavy, gate, 30)
            for _ in range(300):  # a flood of one-request connections, faster than turns admit them
                for _ in range(3):
                    nursery.start_soon(newcomer, gate)
                await trio.lowlevel.checkpoint()
            await _until(lambda: len(waited) == 30 and gate.waiting == 0, limit=100_000)
            nursery.cancel_scope.cancel()
        assert log.count("heavy") == 30
        # a round admits each connection once: the heavy one waits at most for those queued before it
        assert max(waited) <= 3 * 300

    trio.run(main)


def test_each_connection_is_admitted_once_per_round_while_all_are_busy() -> None:
    """Ten busy connections: none waits for more than about two rounds of the others."""
    log: list[int] = []

    async def busy(gate: FairGate, n: int) -> None:
        flow = Flow()
        for _ in range(20):
            await _pass(gate, flow)
            log.append(n)
            await trio.lowlevel.checkpoint()

    async def main() -> None:
        gate = FairGate(per_turn=3)
        async with _bounded_nursery() as nursery:
            nursery.start_soon(gate.run)
            for n in range(10):
                nursery.start_soon(busy, gate, n)
            await _until(lambda: len(log) == 200, limit=100_000)
            nursery.cancel_scope.cancel()
        per_connection = [log.count(n) for n in range(10)]
        assert per_connection == [20] * 10
        for n in range(10):
            at = [i for i, who in enumerate(log) if who == n]
            # its pass in this round, the next round's pass, and the few that turned sparse between
            assert max(b - a for a, b in itertools.pairwise(at)) <= 3 * 10

    trio.run(main)


def test_uncontended_requests_pass_without_waiting_until_the_turn_is_used_up() -> None:
    async def main() -> None:
        gate = FairGate(per_turn=4)
        flow = Flow()
        admitted = [gate.admit_now(flow) for _ in range(6)]
        # the first is sparse (never admitted), then four more from the turn's allowance
        assert admitted == [True, True, True, True, True, False]

    trio.run(main)


def test_a_connection_cancelled_while_waiting_leaves_the_queue() -> None:
    async def main() -> None:
        gate = FairGate(per_turn=1)
        flow = Flow()
        while gate.admit_now(flow):  # use up the turn: the next request must wait
            pass
        with trio.move_on_after(0) as scope:  # cancelled while it waits
            await gate.wait_turn(flow)
        assert scope.cancelled_caught
        assert gate.waiting == 0
        assert flow.fair_task is None

    trio.run(main)


def test_a_lone_busy_connection_streams_without_queueing() -> None:
    """One producer pipelining: refused alone it checkpoints, then streams; the queue stays empty."""
    gate = FairGate(per_turn=2, stream_turn=6)
    flow = Flow()
    per_turn = [0]  # admissions between two polls for I/O
    for _ in range(30):
        while not gate.admit_now(flow):
            assert gate.alone(flow)
            assert gate.waiting == 0
            per_turn.append(0)
            gate.new_turn()  # what the connection's checkpoint brings: trio polls for I/O
        per_turn[-1] += 1
    # sparse + per_turn; refused alone, it streams: sparse + stream_turn a turn
    assert per_turn == [3, 7, 7, 7, 6]


def test_streaming_ends_when_another_connection_is_admitted() -> None:
    gate = FairGate(per_turn=2, stream_turn=6)
    busy, other = Flow(), Flow()
    assert gate.admit_now(busy) and gate.admit_now(busy) and gate.admit_now(busy)
    assert not gate.admit_now(busy)
    assert gate.alone(busy)  # it streams from now on
    gate.new_turn()  # trio polled for I/O; nobody waits, so a new round
    assert gate.admit_now(other)  # someone else is heard from
    admitted = 0
    while gate.admit_now(busy):
        admitted += 1
    assert admitted == 1 + 2  # sparse + per_turn: the stream's larger allowance is gone


def test_a_refused_sparse_request_queues_even_when_nobody_waits() -> None:
    """Sparse requests beyond the turn's sparse allowance queue, to go first at the next turn."""

    async def main() -> None:
        gate = FairGate(per_turn=2)
        others = [Flow(), Flow()]
        assert all(gate.admit_now(f) for f in others)  # the turn's two sparse admissions
        newcomer = Flow()
        assert not gate.admit_now(newcomer)
        assert not gate.alone(newcomer)
        heavy = others[0]
        assert gate.admit_now(heavy) and gate.admit_now(heavy)  # the turn's allowance
        assert not gate.admit_now(heavy)
        assert gate.alone(heavy)

    trio.run(main)


def test_a_round_ends_between_turns_never_within_one() -> None:
    """The sparse ones a turn admits run after it: the round must not end under them."""

    async def main() -> None:
        gate = FairGate(per_turn=2)
        heavy, other, newcomer = Flow(), Flow(), Flow()
        assert all(gate.admit_now(heavy) for _ in range(3))  # sparse, then the turn's allowance
        assert gate.admit_now(other)  # the turn's second sparse admission
        assert not gate.admit_now(heavy) and not gate.admit_now(newcomer)
        async with _bounded_nursery() as nursery:
            nursery.start_soon(gate.wait_turn, heavy)  # the next round's pass
            nursery.start_soon(gate.wait_turn, newcomer)  # first in line
            await _until(lambda: gate.waiting == 2)
            gate.new_turn()
            assert gate.turn() == 1  # the newcomer; the pass is done, but the round goes on
            assert newcomer.fair_task is None and heavy.fair_task is not None
            assert gate.turn() == 1  # the next turn ends the round: the heavy one's pass
            assert gate.waiting == 0

    trio.run(main)


def test_a_sparse_control_request_overtakes_sparse_data_requests_queued_before_it() -> None:
    """A thousand producers starting at once are all sparse (none was heard this round): a
    Metadata request or a heartbeat arriving among them goes first, not after all of them."""
    per_turn = 2
    queued, admitted_before, log = _latecomer_among(
        per_turn, 60, 1, lambda gate, _: gate.waiting >= 40, control=True
    )  # one data request (Produce) each, of connections idle until now
    assert queued >= 40
    # behind the turn under way at most; queued behind the producers, 40 would go first
    assert admitted_before <= 2 * per_turn
    assert sorted(log) == sorted(["latecomer", *(f"c{n}/0" for n in range(60))])


def test_in_a_crowd_a_turn_admits_one_request() -> None:
    """From ``crowd`` waiting connections on, a turn starts one request (and one sparse at once),
    so that the batch a newcomer waits for is one request long; below it, ``per_turn``."""

    async def main() -> None:
        gate = FairGate(per_turn=4, crowd=8)
        async with _bounded_nursery() as nursery:
            for _ in range(12):
                nursery.start_soon(gate.wait_turn, Flow())
            await _until(lambda: gate.waiting == 12)
            gate.new_turn()
            assert gate.admit_now(Flow(), control=True)  # a newcomer still goes at once...
            assert not gate.admit_now(Flow(), control=True)  # ...but only one per turn
            admitted = [gate.turn()]
            while gate.waiting:
                gate.new_turn()
                admitted.append(gate.turn())
        # 12 waiting, then 11..8: one a turn; from 7 the turn's allowance is four again
        assert admitted == [1, 1, 1, 1, 1, 4, 3]

    trio.run(main)
