"""One pipelined connection to a broker, on trio.

Many requests may be in flight; responses are matched by correlation id
(Kafka answers in order per connection, which is checked).  Requests that
expect no answer (Produce with acks=0) are only written.  When the
connection breaks, every waiting request fails with
:class:`~hmb_client.errors.KafkaConnectionError` at once, so nothing hangs.
"""

from __future__ import annotations

import itertools
import logging
from dataclasses import dataclass, field
from typing import Any

import trio

import kproto
from hmb_client.errors import KafkaConnectionError, KafkaTimeoutError

log = logging.getLogger(__name__)


@dataclass
class _Pending:
    api_key: int
    version: int
    done: trio.Event = field(default_factory=trio.Event)
    response: Any = None
    error: BaseException | None = None


class BrokerConnection:
    """A connection to ``host:port``; open with :meth:`open` inside a nursery."""

    def __init__(self, host: str, port: int, *, client_id: str, request_timeout_s: float) -> None:
        self.host = host
        self.port = port
        self.client_id = client_id
        self.request_timeout_s = request_timeout_s
        self._stream: trio.SocketStream | None = None
        self._send_lock = trio.Lock()
        self._pending: dict[int, _Pending] = {}
        self._ids = itertools.count(1)
        self._closed = trio.Event()
        self.error: BaseException | None = None

    def __repr__(self) -> str:
        return f"<BrokerConnection {self.host}:{self.port}{' closed' if self.closed else ''}>"

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    @property
    def in_flight(self) -> int:
        return len(self._pending)

    async def open(self, nursery: trio.Nursery, timeout_s: float) -> None:
        try:
            with trio.fail_after(timeout_s):
                self._stream = await trio.open_tcp_stream(self.host, self.port)
        except (OSError, trio.TooSlowError) as exc:
            self._closed.set()
            raise KafkaConnectionError(f"cannot connect to {self.host}:{self.port}: {exc}") from exc
        nursery.start_soon(self._reader)

    async def _reader(self) -> None:
        assert self._stream is not None
        decoder = kproto.FrameDecoder()
        try:
            while True:
                data = await self._stream.receive_some(1 << 18)
                if not data:
                    raise KafkaConnectionError(f"{self.host}:{self.port} closed the connection")
                decoder.feed(data)
                while (frame := decoder.next_frame()) is not None:
                    self._deliver(frame)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError, KafkaConnectionError) as exc:
            self._fail_all(exc if isinstance(exc, KafkaConnectionError) else KafkaConnectionError(str(exc)))
        except kproto.KprotoError as exc:
            self._fail_all(KafkaConnectionError(f"unreadable response from {self.host}:{self.port}: {exc}"))
            await self.aclose()

    def _deliver(self, frame: bytes) -> None:
        correlation_id = int.from_bytes(frame[4:8], "big", signed=True)
        pending = self._pending.pop(correlation_id, None)
        if pending is None:
            raise KafkaConnectionError(f"response with unknown correlation id {correlation_id}")
        try:
            pending.response = kproto.decode_response(pending.api_key, pending.version, frame).body
        except kproto.KprotoError as exc:
            pending.error = exc
        pending.done.set()

    def _fail_all(self, exc: BaseException) -> None:
        self.error = exc
        self._closed.set()
        for pending in self._pending.values():
            pending.error = exc
            pending.done.set()
        self._pending.clear()

    async def send(
        self, api_key: int, version: int, body: dict[str, Any], *, expect_response: bool = True
    ) -> _Pending | None:
        """Write a request; returns the handle to wait on (None when no response is expected)."""
        if self.closed or self._stream is None:
            raise KafkaConnectionError(f"connection to {self.host}:{self.port} is closed") from self.error
        correlation_id = next(self._ids)
        frame = kproto.encode_request(api_key, version, correlation_id, body, client_id=self.client_id)
        pending = None
        if expect_response:
            pending = self._pending[correlation_id] = _Pending(api_key, version)
        try:
            async with self._send_lock:
                await self._stream.send_all(frame)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
            error = KafkaConnectionError(f"sending to {self.host}:{self.port} failed: {exc}")
            self._fail_all(error)
            raise error from exc
        return pending

    async def wait(self, pending: _Pending, timeout_s: float | None = None) -> Any:
        """The response body for a request :meth:`send` returned."""
        try:
            with trio.fail_after(self.request_timeout_s if timeout_s is None else timeout_s):
                await pending.done.wait()
        except trio.TooSlowError:
            raise KafkaTimeoutError(
                f"no response from {self.host}:{self.port} within {self.request_timeout_s:.1f}s"
            ) from None
        if pending.error is not None:
            raise pending.error
        return pending.response

    async def request(
        self, api_key: int, version: int, body: dict[str, Any], timeout_s: float | None = None
    ) -> Any:
        pending = await self.send(api_key, version, body)
        assert pending is not None
        return await self.wait(pending, timeout_s)

    async def aclose(self) -> None:
        self._fail_all(KafkaConnectionError("connection closed by the client"))
        if self._stream is not None:
            with trio.CancelScope(shield=True):
                await self._stream.aclose()
