"""One connection from this broker to another, for its own requests (a follower's fetches).

A plain request/response exchange over Kafka's framing: one request in
flight at a time, answers matched by correlation id, any surprise (a closed
socket, a frame that does not decode, an answer to another request) ends
the connection with :class:`PeerError` and the caller connects again.
"""

from __future__ import annotations

from typing import Any

import trio

from kproto import ApiKey, KprotoError
from kproto.codec import decode_response, encode_request
from kproto.frames import FrameDecoder

CLIENT_ID = "hmb-replica-fetcher"
MAX_FRAME = 256 * 1024 * 1024  # a follower's fetch answer may be large (replica.fetch.max.bytes x partitions)


class PeerError(Exception):
    """The connection to the other broker failed; connect again."""


class PeerConnection:
    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self._decoder = FrameDecoder(MAX_FRAME)
        self._correlation = 0

    @classmethod
    async def open(cls, host: str, port: int, timeout_s: float) -> PeerConnection:
        try:
            with trio.fail_after(timeout_s):
                return cls(await trio.open_tcp_stream(host, port))
        except (OSError, trio.TooSlowError) as exc:
            raise PeerError(f"cannot connect to {host}:{port}: {exc}") from None

    async def request(self, key: ApiKey, version: int, body: dict[str, Any], timeout_s: float) -> Any:
        """Send one request and return its decoded response body."""
        self._correlation += 1
        try:
            with trio.fail_after(timeout_s):
                await self.stream.send_all(
                    encode_request(key, version, self._correlation, body, client_id=CLIENT_ID)
                )
                while (frame := self._decoder.next_frame()) is None:
                    data = await self.stream.receive_some(1 << 20)
                    if not data:
                        raise PeerError("the other broker closed the connection")
                    self._decoder.feed(data)
            response = decode_response(key, version, frame, max_size=MAX_FRAME)
        except (OSError, trio.BrokenResourceError, trio.ClosedResourceError, trio.TooSlowError) as exc:
            raise PeerError(f"{key.name} v{version}: {type(exc).__name__}: {exc}") from None
        except KprotoError as exc:
            raise PeerError(f"{key.name} v{version}: undecodable answer: {exc}") from None
        if response.correlation_id != self._correlation:
            raise PeerError(f"answer to request {response.correlation_id}, not {self._correlation}")
        return response.body

    async def aclose(self) -> None:
        await self.stream.aclose()
