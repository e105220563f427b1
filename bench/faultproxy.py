"""A fault-injecting TCP proxy on trio, between a client and a broker.

This kernel has no netem, so delay, stalls and connection resets are made
in user space: the proxy accepts on a loopback port, opens one upstream
connection per client connection and copies bytes both ways, applying the
faults in force at that moment:

* ``delay_ms``: every chunk is held for that long before it is forwarded
  (order kept: a chunk never overtakes an earlier one), in both directions
  — what netem's ``delay`` does to a stream;
* ``stall``: nothing is forwarded while it holds (bytes queue up, as on a
  link that went silent) and flows again afterwards;
* ``reset_probability``: per forwarded chunk, the chance that both sides of
  that connection are closed with a TCP RST (SO_LINGER 0), as a middlebox
  or a crashed peer does.

Faults are set while the proxy runs (:meth:`FaultProxy.set_faults`), for
the whole run or for a window, which is how rAck applied delay for 60 s
mid-run.  Metadata responses carry the broker's advertised address, so a
client would bypass the proxy after bootstrap: the broker under test must
advertise the proxy's address (hmb: ``--advertised-listener``-style
override ``advertised.listeners``; the bench runner sets it).
"""

from __future__ import annotations

import random
import socket
import struct
import threading
from dataclasses import dataclass, replace

import trio


@dataclass(frozen=True)
class Faults:
    delay_ms: float = 0.0
    stall: bool = False
    reset_probability: float = 0.0


@dataclass
class ProxyStats:
    connections: int = 0
    resets: int = 0
    bytes_up: int = 0
    bytes_down: int = 0


def _rst(stream: trio.SocketStream) -> None:
    """Make the next close send RST instead of FIN."""
    try:
        stream.socket.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass


class FaultProxy:
    """``async with trio.open_nursery() as n: port = await n.start(proxy.serve, 0)``.

    Or from a thread-based program: :meth:`start_in_thread` / :meth:`stop`.
    """

    def __init__(
        self, upstream: tuple[str, int], faults: Faults | None = None, seed: int | None = None
    ) -> None:
        self.upstream = upstream
        self.faults = faults or Faults()
        self.stats = ProxyStats()
        self._rng = random.Random(seed)
        self._changed = trio.Event()
        self._token: trio.lowlevel.TrioToken | None = None
        self._cancel: trio.CancelScope | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    # ---------------------------------------------------------------- control

    def set_faults(self, faults: Faults | None = None, **changes: float | bool) -> None:
        """Replace the faults (or change some fields); safe from any thread."""
        new = faults if faults is not None else replace(self.faults, **changes)  # type: ignore[arg-type]

        def apply() -> None:
            self.faults = new
            self._changed.set()
            self._changed = trio.Event()

        try:
            in_proxy_run = trio.lowlevel.current_trio_token() is self._token
        except RuntimeError:  # not in any trio run: another thread
            in_proxy_run = False
        if self._token is None or in_proxy_run:
            apply()
        else:
            trio.from_thread.run_sync(apply, trio_token=self._token)

    # ---------------------------------------------------------------- serving

    async def serve(
        self, port: int = 0, *, task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED
    ) -> None:
        self._token = trio.lowlevel.current_trio_token()
        listeners = await trio.open_tcp_listeners(port, host="127.0.0.1")
        self.port = listeners[0].socket.getsockname()[1]
        with trio.CancelScope() as self._cancel:
            async with trio.open_nursery() as nursery:
                task_status.started(self.port)
                await trio.serve_listeners(self._handle, listeners, handler_nursery=nursery)

    async def _handle(self, client: trio.SocketStream) -> None:
        self.stats.connections += 1
        try:
            upstream = await trio.open_tcp_stream(*self.upstream)
        except OSError:
            _rst(client)
            await client.aclose()
            return
        async with client, upstream, trio.open_nursery() as nursery:
            reset = trio.Event()
            nursery.start_soon(self._pump, client, upstream, True, reset, nursery.cancel_scope)
            nursery.start_soon(self._pump, upstream, client, False, reset, nursery.cancel_scope)
        if reset.is_set():
            self.stats.resets += 1

    async def _pump(
        self,
        src: trio.SocketStream,
        dst: trio.SocketStream,
        up: bool,
        reset: trio.Event,
        scope: trio.CancelScope,
    ) -> None:
        """Copy src -> dst through a queue so delayed chunks keep their order."""
        send, receive = trio.open_memory_channel[tuple[float, bytes]](1024)

        async def forward() -> None:
            async for due, chunk in receive:
                while True:
                    wait = due + self.faults.delay_ms / 1000 - trio.current_time()
                    if self.faults.stall:
                        await self._changed.wait()
                        continue
                    if wait > 0:
                        with trio.move_on_after(wait):
                            await self._changed.wait()  # re-read the delay if it changes
                        continue
                    break
                if self.faults.reset_probability and self._rng.random() < self.faults.reset_probability:
                    reset.set()
                    _rst(src)
                    _rst(dst)
                    scope.cancel()
                    return
                try:
                    await dst.send_all(chunk)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    scope.cancel()
                    return
                if up:
                    self.stats.bytes_up += len(chunk)
                else:
                    self.stats.bytes_down += len(chunk)

        async with trio.open_nursery() as inner:
            inner.start_soon(forward)
            try:
                while chunk := await src.receive_some(1 << 16):
                    await send.send((trio.current_time(), chunk))
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass
            await send.aclose()  # the forwarder drains what is queued, then ends
        # One side closed: close the other's write side by ending the connection.
        scope.cancel()

    # ---------------------------------------------------------------- thread mode

    def start_in_thread(self, port: int = 0) -> int:
        """Run the proxy in a background thread; returns the listening port."""
        started = threading.Event()

        async def main() -> None:
            async with trio.open_nursery() as n:
                await n.start(self.serve, port)
                started.set()

        self._thread = threading.Thread(target=trio.run, args=(main,), daemon=True, name="fault-proxy")
        self._thread.start()
        if not started.wait(10):
            raise RuntimeError("fault proxy did not start")
        return self.port

    def stop(self) -> None:
        if self._token is not None and self._cancel is not None and self._thread is not None:
            cancel = self._cancel
            try:
                trio.from_thread.run_sync(cancel.cancel, trio_token=self._token)
            except trio.RunFinishedError:
                pass
            self._thread.join(10)
