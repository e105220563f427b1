"""A connection is one task; a handler waiting on its client gets a second one reading beside it.

Over real sockets to a broker running in this test's own ``trio.run``, so
the scheduler's count of living tasks says how many each connection costs.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import trio

import kproto
from hmb.broker import Broker
from hmb.config import from_properties
from kproto import ApiKey

CONNECTIONS = 20


def _tasks() -> int:
    return trio.lowlevel.current_statistics().tasks_living


async def _answer(stream: trio.SocketStream) -> bytes:
    head = b""
    while len(head) < 4:
        chunk = await stream.receive_some(4 - len(head))
        assert chunk, "the broker closed the connection"
        head += chunk
    (size,) = struct.unpack(">i", head)
    body = b""
    while len(body) < size:
        chunk = await stream.receive_some(size - len(body))
        assert chunk, "the broker closed the connection"
        body += chunk
    return body


def _long_poll(topic: str) -> dict[str, Any]:
    partition = {"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 20}
    return {
        "replica_id": -1,
        "max_wait_ms": 30_000,  # far beyond this test's bounds: only the client's leaving ends it
        "min_bytes": 1,
        "max_bytes": 1 << 20,
        "isolation_level": 0,
        "topics": [{"topic": topic, "partitions": [partition]}],
    }


def _run_with_broker(tmp_path: Path, test: Any) -> None:
    async def main() -> None:
        cfg = from_properties({"listeners": "127.0.0.1:0", "log.dirs": str(tmp_path / "data")})
        broker = Broker(cfg)
        with trio.fail_after(30):
            async with trio.open_nursery() as nursery:
                address = await nursery.start(broker.run)
                await test(broker, address)
                nursery.cancel_scope.cancel()

    trio.run(main)


def test_an_idle_connection_is_one_task(tmp_path: Path) -> None:
    async def test(broker: Broker, address: tuple[str, int]) -> None:
        before = _tasks()
        streams = []
        for i in range(CONNECTIONS):
            stream = await trio.open_tcp_stream(*address)
            await stream.send_all(kproto.encode_request(ApiKey.API_VERSIONS, 0, i, {}))
            assert await _answer(stream)
            streams.append(stream)
        assert _tasks() - before == CONNECTIONS
        for stream in streams:
            await stream.aclose()

    _run_with_broker(tmp_path, test)


def test_a_long_poll_gets_a_watcher_that_sees_its_client_leave(tmp_path: Path) -> None:
    async def test(broker: Broker, address: tuple[str, int]) -> None:
        broker.logs.create_topic("polled", 1)
        before = _tasks()
        stream = await trio.open_tcp_stream(*address)
        await stream.send_all(kproto.encode_request(ApiKey.API_VERSIONS, 0, 1, {}))
        assert await _answer(stream)
        assert _tasks() - before == 1
        await stream.send_all(kproto.encode_request(ApiKey.FETCH, 4, 2, _long_poll("polled")))
        with trio.fail_after(5):
            while _tasks() - before < 2:  # the fetch waits on its client: a watcher reads meanwhile
                await trio.sleep(0.01)
        await stream.aclose()
        # the watcher reads the end of the stream, the poll ends, and both tasks with it
        with trio.fail_after(5):
            while _tasks() > before:
                await trio.sleep(0.01)

    _run_with_broker(tmp_path, test)


def test_requests_sent_together_are_answered_in_order_by_the_one_task(tmp_path: Path) -> None:
    async def test(broker: Broker, address: tuple[str, int]) -> None:
        stream = await trio.open_tcp_stream(*address)
        burst = b"".join(kproto.encode_request(ApiKey.API_VERSIONS, 0, i, {}) for i in range(50))
        await stream.send_all(burst)
        ids = [struct.unpack(">i", (await _answer(stream))[:4])[0] for _ in range(50)]
        assert ids == list(range(50))
        await stream.aclose()

    _run_with_broker(tmp_path, test)


def test_unusable_bytes_during_a_long_poll_end_the_poll_and_the_connection(tmp_path: Path) -> None:
    async def test(broker: Broker, address: tuple[str, int]) -> None:
        broker.logs.create_topic("polled", 1)
        before = _tasks()
        stream = await trio.open_tcp_stream(*address)
        await stream.send_all(kproto.encode_request(ApiKey.FETCH, 4, 2, _long_poll("polled")))
        with trio.fail_after(5):
            while _tasks() - before < 2:  # the watcher reads while the fetch waits
                await trio.sleep(0.01)
        await stream.send_all(struct.pack(">i", -5))  # a negative frame size: nothing to decode
        # long before the poll's 30 s: the fetch is answered, then the broker closes the connection
        with trio.fail_after(5):
            rest = b""
            while chunk := await stream.receive_some():
                rest += chunk
            while _tasks() > before:
                await trio.sleep(0.01)
        (size,) = struct.unpack(">i", rest[:4])
        assert struct.unpack(">i", rest[4:8])[0] == 2  # the fetch's answer, then the end
        assert len(rest) == 4 + size
        await stream.aclose()

    _run_with_broker(tmp_path, test)
