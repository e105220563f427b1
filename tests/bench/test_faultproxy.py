"""The fault-injecting proxy: bytes pass unchanged, and each fault does what it says."""

from __future__ import annotations

import socket
import time

import pytest
import trio

from bench.faultproxy import FaultProxy, Faults


async def _echo_server(task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED) -> None:
    async def echo(stream: trio.SocketStream) -> None:
        async with stream:
            try:
                while data := await stream.receive_some(1 << 16):
                    await stream.send_all(data)
            except trio.BrokenResourceError:
                pass

    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    task_status.started(listeners[0].socket.getsockname()[1])
    await trio.serve_listeners(echo, listeners)


async def _roundtrip(port: int, payload: bytes) -> bytes:
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    async with stream:
        await stream.send_all(payload)
        got = b""
        while len(got) < len(payload):
            chunk = await stream.receive_some(1 << 16)
            if not chunk:
                break
            got += chunk
        return got


def test_bytes_pass_unchanged_and_delay_applies_both_ways() -> None:
    async def main() -> None:
        async with trio.open_nursery() as n:
            echo_port = await n.start(_echo_server)
            proxy = FaultProxy(("127.0.0.1", echo_port))
            port = await n.start(proxy.serve, 0)
            payload = bytes(range(256)) * 4000
            assert await _roundtrip(port, payload) == payload
            proxy.set_faults(delay_ms=150)
            t0 = trio.current_time()
            assert await _roundtrip(port, b"ping") == b"ping"
            assert trio.current_time() - t0 >= 0.3  # 150 ms each way
            assert proxy.stats.bytes_up >= len(payload) + 4
            n.cancel_scope.cancel()

    trio.run(main)


def test_stall_holds_bytes_until_lifted() -> None:
    async def main() -> None:
        async with trio.open_nursery() as n:
            echo_port = await n.start(_echo_server)
            proxy = FaultProxy(("127.0.0.1", echo_port), Faults(stall=True))
            port = await n.start(proxy.serve, 0)
            result: list[bytes] = []

            async def client() -> None:
                result.append(await _roundtrip(port, b"held"))

            n.start_soon(client)
            with trio.move_on_after(0.3):
                while not result:
                    await trio.sleep(0.01)
            assert result == []  # nothing got through while stalled
            proxy.set_faults(stall=False)
            with trio.fail_after(5):
                while not result:
                    await trio.sleep(0.01)
            assert result == [b"held"]
            n.cancel_scope.cancel()

    trio.run(main)


def test_reset_closes_the_connection_with_rst() -> None:
    async def main() -> None:
        async with trio.open_nursery() as n:
            echo_port = await n.start(_echo_server)
            proxy = FaultProxy(("127.0.0.1", echo_port), Faults(reset_probability=1.0))
            port = await n.start(proxy.serve, 0)
            with pytest.raises((trio.BrokenResourceError, AssertionError)):
                got = await _roundtrip(port, b"x" * 10)
                assert got == b"x" * 10
            assert proxy.stats.resets == 1
            n.cancel_scope.cancel()

    trio.run(main)


def test_real_client_through_the_proxy_in_thread_mode(make_broker) -> None:  # type: ignore[no-untyped-def]
    """The broker advertises the proxy, so every request of a real client crosses it."""
    import confluent_kafka as ck

    proxy_port = socket.socket()
    proxy_port.bind(("127.0.0.1", 0))
    port = proxy_port.getsockname()[1]
    proxy_port.close()
    broker = make_broker(f"advertised.listeners=PLAINTEXT://127.0.0.1:{port}")
    proxy = FaultProxy(("127.0.0.1", broker.port))
    proxy.start_in_thread(port)
    try:
        p = ck.Producer({"bootstrap.servers": f"127.0.0.1:{port}", "log_level": 3})
        for i in range(100):
            p.produce("through-proxy", str(i).encode())
        assert p.flush(30) == 0
        before = proxy.stats.connections
        proxy.set_faults(delay_ms=200)
        t0 = time.monotonic()
        p.produce("through-proxy", b"slow")
        assert p.flush(30) == 0
        assert time.monotonic() - t0 >= 0.4
        assert proxy.stats.connections == before  # the same connection, only slower
        assert proxy.stats.bytes_up > 100
    finally:
        proxy.stop()
