"""The reader/handler queue of a connection: order, back-pressure, end, abandonment, cancellation."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from hmb.net.frame_queue import FrameQueue


def run(fn) -> None:  # type: ignore[no-untyped-def]
    trio.run(fn)


def test_frames_come_out_in_order_and_none_once_closed() -> None:
    async def main() -> None:
        q = FrameQueue(10)
        for i in range(5):
            assert q.put_nowait(b"%d" % i)
        q.close()
        assert [await q.take() for _ in range(6)] == [b"0", b"1", b"2", b"3", b"4", None]

    run(main)


def test_a_full_queue_refuses_without_waiting_and_the_reader_waits_for_room() -> None:
    async def main() -> None:
        q = FrameQueue(2)
        assert q.put_nowait(b"a") and q.put_nowait(b"b")
        assert not q.put_nowait(b"c")
        done = trio.Event()

        async def reader() -> None:
            await q.put(b"c")
            done.set()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(reader)
            await trio.testing.wait_all_tasks_blocked()
            assert not done.is_set()  # still waiting: two frames are queued
            assert q.take_nowait() == b"a"
            await done.wait()
        assert [q.take_nowait(), q.take_nowait(), q.take_nowait()] == [b"b", b"c", None]

    run(main)


def test_a_waiting_handler_wakes_for_a_frame_and_for_the_end() -> None:
    async def main() -> None:
        q = FrameQueue(4)
        got: list[bytes | None] = []

        async def handler() -> None:
            got.append(await q.take())
            got.append(await q.take())

        async with trio.open_nursery() as nursery:
            nursery.start_soon(handler)
            await trio.testing.wait_all_tasks_blocked()
            assert got == []
            q.put_nowait(b"x")
            await trio.testing.wait_all_tasks_blocked()
            assert got == [b"x"]
            q.close()
        assert got == [b"x", None]

    run(main)


def test_an_abandoned_queue_breaks_the_reader_also_while_it_waits() -> None:
    async def main() -> None:
        q = FrameQueue(1)
        q.put_nowait(b"a")
        broke: list[BaseException] = []

        async def reader() -> None:
            try:
                await q.put(b"b")
            except trio.BrokenResourceError as exc:
                broke.append(exc)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(reader)
            await trio.testing.wait_all_tasks_blocked()
            assert broke == []  # waiting for room
            q.abandon()
        assert len(broke) == 1
        with pytest.raises(trio.BrokenResourceError):
            q.put_nowait(b"c")

    run(main)


def test_cancelled_waits_leave_the_queue_usable() -> None:
    async def main() -> None:
        q = FrameQueue(1)
        with trio.move_on_after(0.01):
            await q.take()
        q.put_nowait(b"a")
        with trio.move_on_after(0.01):
            await q.put(b"b")  # full: waits, then is cancelled
        assert q.take_nowait() == b"a"
        assert q.put_nowait(b"c")  # no stale waiter was left behind
        assert await q.take() == b"c"

    run(main)
