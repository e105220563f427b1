"""What a handler gets besides the request: the broker's parts and the peer.

Handlers are thin (kfake style): they translate between the request's
fields and calls on the log and group layers, and turn exceptions into
Kafka error codes.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import trio

from kproto import Request

if TYPE_CHECKING:
    from hmb.broker import Broker
    from hmb.log.partition import FileRegion


class CloseConnection(Exception):  # noqa: N818 - an instruction to the network layer, not a failure
    """End this connection; the message is the logged reason.

    Raised by the network layer for unusable bytes and by handlers where
    Kafka closes the socket (a failed produce with acks=0, so the producer
    notices).
    """


@dataclass
class RequestContext:
    broker: Broker
    request: Request
    peer: str = "?"
    #: set when the client has closed its side: long waits end early
    client_gone: trio.Event = field(default_factory=trio.Event)


class NoResponse:
    """The request is answered with silence (Produce with acks=0)."""


NO_RESPONSE = NoResponse()


@dataclass
class RawResponse:
    """A response assembled in pieces: bytes and file regions, size prefix included.

    ``resources`` is closed once the pieces are on the wire (it unpins the
    segments the regions point into).
    """

    parts: list[bytes | FileRegion]
    resources: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)

    @property
    def size(self) -> int:
        return sum(len(p) if isinstance(p, bytes) else p.length for p in self.parts)


Reply = dict[str, Any] | NoResponse | RawResponse | bytes
"""A handler's answer: a body for ``kproto.encode_response``, silence, a response in
pieces, or ``bytes``: a whole response frame (size prefix included) a handler encoded
itself (Produce's struct fast path)."""
