"""Tests of the trio MVar (hmb.mvar): blocking, FIFO hand-over, *_nowait twins,
modify() under errors and cancellation, statistics().

Waits are on conditions (``wait_all_tasks_blocked``, events), never sleeps.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest
import trio
import trio.testing

from hmb.mvar import MVar, MVarStatistics


def _run(main: Callable[[], Awaitable[None]]) -> None:
    """A deadlock (a value never put back) fails the test instead of hanging it."""

    async def bounded() -> None:
        with trio.fail_after(10):
            await main()

    trio.run(bounded)


def test_nowait_twins() -> None:
    async def main() -> None:
        mv = MVar(1)
        assert mv.full
        assert mv.read_nowait() == 1
        with pytest.raises(trio.WouldBlock):
            mv.put_nowait(2)  # full
        assert mv.take_nowait() == 1
        assert not mv.full
        with pytest.raises(trio.WouldBlock):
            mv.take_nowait()  # empty
        with pytest.raises(trio.WouldBlock):
            mv.read_nowait()
        mv.put_nowait(3)
        assert mv.read_nowait() == 3
        assert mv.take_nowait() == 3

    _run(main)


def test_falsy_values_are_values() -> None:
    async def main() -> None:
        for value in (None, 0, "", []):
            mv = MVar(value)
            assert mv.full
            assert mv.take_nowait() == value
            assert not mv.full

    _run(main)


def test_take_blocks_until_put() -> None:
    async def main() -> None:
        mv = MVar("x")
        mv.take_nowait()
        got: list[str] = []

        async def taker() -> None:
            got.append(await mv.take())

        async with trio.open_nursery() as nursery:
            nursery.start_soon(taker)
            await trio.testing.wait_all_tasks_blocked()
            assert got == []
            assert mv.statistics().tasks_waiting_take == 1
            await mv.put("y")
        assert got == ["y"]
        assert not mv.full

    _run(main)


def test_put_blocks_until_take() -> None:
    async def main() -> None:
        mv = MVar(1)
        done = trio.Event()

        async def putter() -> None:
            await mv.put(2)
            done.set()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(putter)
            await trio.testing.wait_all_tasks_blocked()
            assert not done.is_set()
            assert mv.statistics().tasks_waiting_put == 1
            assert await mv.take() == 1
            await done.wait()
            assert mv.read_nowait() == 2

    _run(main)


def test_blocked_takers_are_served_in_arrival_order() -> None:
    async def main() -> None:
        mv: MVar[int] = MVar(0)
        mv.take_nowait()
        order: list[tuple[str, int]] = []

        async def taker(name: str) -> None:
            order.append((name, await mv.take()))

        async with trio.open_nursery() as nursery:
            for name in "abcd":
                nursery.start_soon(taker, name)
                await trio.testing.wait_all_tasks_blocked()  # a parks before b starts, ...
            assert mv.statistics().tasks_waiting_take == 4
            for value in range(4):
                await mv.put(value)  # blocks while the previous value is not yet taken
        assert order == [("a", 0), ("b", 1), ("c", 2), ("d", 3)]

    _run(main)


def test_blocked_putters_are_served_in_arrival_order() -> None:
    async def main() -> None:
        mv: MVar[str] = MVar("first")
        async with trio.open_nursery() as nursery:
            for name in "abc":
                nursery.start_soon(mv.put, name)
                await trio.testing.wait_all_tasks_blocked()
            assert mv.statistics().tasks_waiting_put == 3
            got = [await mv.take() for _ in range(4)]
        assert got == ["first", "a", "b", "c"]

    _run(main)


def test_a_woken_taker_is_not_overtaken() -> None:
    """A value put while takers wait belongs to the longest waiting one (Haskell's
    fairness), not to a task that arrives between the put and the wake-up."""

    async def main() -> None:
        mv: MVar[int] = MVar(0)
        mv.take_nowait()
        got: list[tuple[str, int]] = []

        async def taker(name: str) -> None:
            got.append((name, await mv.take()))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(taker, "waiting")
            await trio.testing.wait_all_tasks_blocked()
            mv.put_nowait(1)
            # the newcomer arrives before the woken task had a chance to run
            with pytest.raises(trio.WouldBlock):
                mv.take_nowait()
            nursery.start_soon(taker, "newcomer")
            await trio.testing.wait_all_tasks_blocked()
            assert got == [("waiting", 1)]
            mv.put_nowait(2)
        assert got == [("waiting", 1), ("newcomer", 2)]

    _run(main)


def test_a_modify_loop_does_not_starve_a_waiting_task() -> None:
    """A task that leaves modify() and re-enters at once must queue behind the waiters."""

    async def main() -> None:
        mv: MVar[list[str]] = MVar([])
        go = trio.Event()

        async def busy() -> None:
            for i in range(5):
                async with mv.modify() as log:
                    log.append(f"busy{i}")
                    # an await point inside the block (an fsync, say); the first one lasts
                    # until the other task is waiting
                    await (go.wait() if i == 0 else trio.sleep(0))

        async def once() -> None:
            async with mv.modify() as log:
                log.append("once")

        async with trio.open_nursery() as nursery:
            nursery.start_soon(busy)
            await trio.testing.wait_all_tasks_blocked()
            nursery.start_soon(once)
            await trio.testing.wait_all_tasks_blocked()
            assert mv.statistics().tasks_waiting_take == 1
            go.set()
        assert mv.read_nowait() == ["busy0", "once", "busy1", "busy2", "busy3", "busy4"]

    _run(main)


def test_a_woken_putter_is_not_overtaken() -> None:
    async def main() -> None:
        mv: MVar[int] = MVar(0)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(mv.put, 1)
            await trio.testing.wait_all_tasks_blocked()
            assert mv.take_nowait() == 0
            with pytest.raises(trio.WouldBlock):
                mv.put_nowait(99)  # the slot is promised to the waiting putter
        assert mv.take_nowait() == 1

    _run(main)


def test_cancelled_taker_leaves_no_trace() -> None:
    async def main() -> None:
        mv: MVar[int] = MVar(0)
        mv.take_nowait()
        got: list[int] = []
        scopes: list[trio.CancelScope] = []

        async def doomed() -> None:
            with trio.CancelScope() as scope:
                scopes.append(scope)
                got.append(-1 - await mv.take())

        async def taker() -> None:
            got.append(await mv.take())

        async with trio.open_nursery() as nursery:
            nursery.start_soon(doomed)  # first in line ...
            await trio.testing.wait_all_tasks_blocked()
            nursery.start_soon(taker)
            await trio.testing.wait_all_tasks_blocked()
            assert mv.statistics().tasks_waiting_take == 2
            scopes[0].cancel()  # ... but gone before anything was put
            await trio.testing.wait_all_tasks_blocked()
            assert mv.statistics().tasks_waiting_take == 1
            await mv.put(5)
        assert got == [5]
        assert not mv.full

    _run(main)


def test_take_and_put_are_checkpoints() -> None:
    async def main() -> None:
        mv: MVar[int] = MVar(1)
        with trio.CancelScope() as scope:
            scope.cancel()
            with pytest.raises(trio.Cancelled):
                await mv.take()
        assert mv.full  # a cancelled take takes nothing
        mv.take_nowait()
        with trio.CancelScope() as scope:
            scope.cancel()
            with pytest.raises(trio.Cancelled):
                await mv.put(2)
        assert not mv.full  # a cancelled put puts nothing

    _run(main)


def test_modify_puts_back_after_the_block() -> None:
    async def main() -> None:
        mv: MVar[list[int]] = MVar([])
        async with mv.modify() as state:
            assert not mv.full  # taken for the duration
            state.append(1)
        assert mv.read_nowait() == [1]

    _run(main)


def test_modify_puts_back_on_exception() -> None:
    async def main() -> None:
        mv: MVar[list[int]] = MVar([])
        with pytest.raises(RuntimeError, match="boom"):
            async with mv.modify() as state:
                state.append(1)
                raise RuntimeError("boom")
        assert mv.full
        assert mv.read_nowait() == [1]
        async with mv.modify() as state:  # usable again
            state.append(2)
        assert mv.read_nowait() == [1, 2]

    _run(main)


def test_modify_puts_back_on_cancellation() -> None:
    async def main() -> None:
        mv: MVar[list[int]] = MVar([])
        inside = trio.Event()

        async def holder() -> None:
            async with mv.modify() as state:
                state.append(1)
                inside.set()
                await trio.sleep_forever()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(holder)
            await inside.wait()
            assert not mv.full
            nursery.cancel_scope.cancel()
        assert mv.full
        assert mv.read_nowait() == [1]

    _run(main)


def test_modify_serialises_tasks() -> None:
    """Two modifiers never interleave, even across await points inside the block."""

    async def main() -> None:
        mv: MVar[list[str]] = MVar([])
        gates = {name: trio.Event() for name in "ab"}

        async def worker(name: str) -> None:
            async with mv.modify() as log:
                log.append(f"{name}-in")
                await gates[name].wait()
                log.append(f"{name}-out")

        async with trio.open_nursery() as nursery:
            nursery.start_soon(worker, "a")
            await trio.testing.wait_all_tasks_blocked()
            nursery.start_soon(worker, "b")
            await trio.testing.wait_all_tasks_blocked()
            assert mv.statistics() == MVarStatistics(full=False, tasks_waiting_take=1, tasks_waiting_put=0)
            gates["b"].set()  # b may not run: it has not got the value
            await trio.testing.wait_all_tasks_blocked()
            gates["a"].set()
        assert mv.read_nowait() == ["a-in", "a-out", "b-in", "b-out"]

    _run(main)


def test_statistics() -> None:
    async def main() -> None:
        mv: MVar[int] = MVar(1)
        assert mv.statistics() == MVarStatistics(full=True, tasks_waiting_take=0, tasks_waiting_put=0)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(mv.put, 2)
            nursery.start_soon(mv.put, 3)
            await trio.testing.wait_all_tasks_blocked()
            assert mv.statistics() == MVarStatistics(full=True, tasks_waiting_take=0, tasks_waiting_put=2)
            assert {await mv.take() for _ in range(3)} == {1, 2, 3}
        assert mv.statistics() == MVarStatistics(full=False, tasks_waiting_take=0, tasks_waiting_put=0)
        async with trio.open_nursery() as nursery:
            for _ in range(3):
                nursery.start_soon(mv.take)
            await trio.testing.wait_all_tasks_blocked()
            assert mv.statistics() == MVarStatistics(full=False, tasks_waiting_take=3, tasks_waiting_put=0)
            for v in range(3):
                await mv.put(v)
        assert mv.statistics().tasks_waiting_take == 0

    _run(main)
