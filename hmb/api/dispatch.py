"""From a request frame to a reply: decode, version-gate, dispatch, map failures to a close.

Rules, in the order they apply to a frame:

1. Produce, the request that comes by the thousand, is tried on kproto's
   struct fast path first (:mod:`kproto.produce_fast`); whatever that path
   does not read takes the general way, which also decides what is an error.
2. A frame whose header cannot be read closes the connection.
3. ApiVersions in a version above ours is answered with UNSUPPORTED_VERSION
   in the v0 layout, listing what we serve, so the client can retry with a
   version from that list (Kafka does the same).
4. Any other API key or version we do not serve closes the connection with
   a logged reason naming what we do serve.
5. A body that does not parse closes the connection.
6. A test's interceptor (:mod:`hmb.control`, only when the broker has one)
   sees the decoded request first: it logs it and may delay it, close the
   connection or answer it with an injected error instead of the handler.
7. The handler runs with a :class:`RequestContext`; its reply becomes a
   frame (a body is encoded here; a handler's own bytes or pieces pass
   through; silence stays silence).

0. Before any of these, the authentication gate: a connection on a SASL
   listener that has not authenticated yet, or whose authentication has
   expired (``connections.max.reauth.ms``), may send only ApiVersions and
   the SASL requests; anything else closes it (Kafka does the same).

The network layer calls :meth:`Dispatcher.dispatch` once per frame, in
order, and knows none of these rules.  Later gates (per-request metrics)
belong here too.
"""

from __future__ import annotations

from typing import Protocol

import trio

import kproto
from hmb.api import HANDLERS, sasl
from hmb.api.api_versions import unsupported_version_response
from hmb.api.context import CloseConnection, NoResponse, RawResponse, Reply, RequestContext, Services, Session
from hmb.api.registry import Handler
from kproto import ApiKey, DecodeError, KprotoError, UnsupportedVersionError
from kproto.produce_fast import decode_produce_request

_PRODUCE_KEY = ApiKey.PRODUCE.to_bytes(2, "big")
_DATA_KEYS = frozenset(k.to_bytes(2, "big") for k in (ApiKey.PRODUCE, ApiKey.FETCH, ApiKey.SHARE_FETCH))
"""Requests whose cost grows with the records they carry or ask for (the rest is control)."""
_BEFORE_AUTHENTICATION = frozenset({ApiKey.API_VERSIONS, ApiKey.SASL_HANDSHAKE, ApiKey.SASL_AUTHENTICATE})
"""What a SASL connection may send before it has authenticated."""

Outcome = bytes | RawResponse | None
"""What goes back for one request: a whole frame, a frame in pieces, or nothing."""


class Interceptor(Protocol):
    """Sees each decoded request before its handler (rule 6); None lets the handler answer."""

    async def intercept(self, request: kproto.Request, session: Session) -> Reply | None: ...


class Dispatcher:
    """Answers the request frames of every connection of one broker."""

    def __init__(self, services: Services, handlers: dict[int, Handler] | None = None) -> None:
        self.services = services
        self.handlers = HANDLERS if handlers is None else handlers
        self._produce = self.handlers.get(ApiKey.PRODUCE)
        self._max_size = services.config.socket_request_max_bytes
        self.interceptor: Interceptor | None = None  # set by brokers under test control

    @property
    def serves_sasl(self) -> bool:
        """Whether SaslHandshake and SaslAuthenticate have handlers (SASL listeners need both)."""
        return ApiKey.SASL_HANDSHAKE in self.handlers and ApiKey.SASL_AUTHENTICATE in self.handlers

    @staticmethod
    def carries_data(frame: bytes) -> bool:
        """Whether ``frame`` is a Produce or (Share)Fetch request: the fair gate lets a connection's
        control request (metadata, a heartbeat, a commit) go before data requests that arrived
        as early in the round (:mod:`hmb.net.fairness`).  Read from the header's key alone."""
        return frame[4:6] in _DATA_KEYS

    async def dispatch(self, frame: bytes, session: Session) -> Outcome:
        """The reply to ``frame``; raises :class:`CloseConnection` when the connection must end."""
        if session.sasl is not None and session.sasl.raw:
            return await sasl.raw_token(self.services, session, frame[4:])
        if not session.authenticated or session.reauth_deadline is not None:
            _gate(frame, session)
        request = decode_produce_request(frame) if frame[4:6] == _PRODUCE_KEY else None
        if request is not None and self._produce is not None and self._produce.supports(request.version):
            handler = self._produce
        else:
            try:
                peek = kproto.peek_request(frame)
            except DecodeError as exc:
                raise CloseConnection(str(exc)) from None
            found = self.handlers.get(peek.api_key)
            if found is None or not found.supports(peek.version):
                if peek.api_key == ApiKey.API_VERSIONS:
                    # a client newer than us: tell it what we have, in the layout every version reads
                    return unsupported_version_response(peek.correlation_id, self.handlers)
                served = "" if found is None else f" (supported v{found.min_version}-v{found.max_version})"
                raise CloseConnection(
                    f"unsupported request {ApiKey.name_of(peek.api_key)} v{peek.version}{served}"
                )
            handler = found
            try:
                # Kafka ignores bytes after a body, and librdkafka sends some (docs/client-quirks.md)
                request = kproto.decode_request(frame, max_size=self._max_size, allow_trailing=True)
            except UnsupportedVersionError as exc:
                raise CloseConnection(str(exc)) from None
            except KprotoError as exc:
                raise CloseConnection(f"malformed request: {exc}") from None
        reply = None if self.interceptor is None else await self.interceptor.intercept(request, session)
        if reply is None:
            reply = await handler.handle(RequestContext(self.services, request, session))
        if isinstance(reply, NoResponse):
            return None
        if isinstance(reply, (RawResponse, bytes)):
            return reply
        return kproto.encode_response(request.api_key, request.version, request.correlation_id, reply)


def _gate(frame: bytes, session: Session) -> None:
    """Close a connection that sends anything but ApiVersions and SASL before authenticating."""
    api_key = int.from_bytes(frame[4:6], "big")
    if api_key in _BEFORE_AUTHENTICATION:
        return
    name = ApiKey.name_of(api_key)
    if not session.authenticated:
        raise CloseConnection(f"{name} before SASL authentication on listener {session.listener}")
    if session.reauth_deadline is not None and trio.current_time() > session.reauth_deadline:
        raise CloseConnection(f"{name} after the SASL authentication of {session.principal} expired")
