"""SASL on a connection: the handshake, the token exchange, re-authentication (KIP-368).

Rules, as Kafka's broker keeps them:

* SaslHandshake names a mechanism from ``sasl.enabled.mechanisms``; any
  other is answered UNSUPPORTED_SASL_MECHANISM with the enabled list, and
  the connection closes after the answer.  On a listener that is not SASL,
  or in the middle of an exchange, it is ILLEGAL_SASL_STATE.
* After a v1 handshake the tokens come in SaslAuthenticate requests; after
  a v0 handshake they come as bare size-prefixed frames (the dispatcher
  hands those to :func:`raw_token`).
* A failed exchange is logged with the peer, answered (v1:
  SASL_AUTHENTICATION_FAILED with a message; v0: nothing) only after
  ``connection.failed.authentication.delay.ms``, and the connection closes.
* Success sets the session's principal (``User:<name>``).  With
  ``connections.max.reauth.ms`` the answer carries the session lifetime and
  the session expires then (the dispatcher closes an expired connection
  that sends anything but ApiVersions and SASL).  Re-authenticating must use
  the same mechanism and prove the same principal.
"""

from __future__ import annotations

import logging
import struct
from dataclasses import dataclass

import trio

from hmb.api.context import CloseConnection, Services, Session
from hmb.security.errors import AuthenticationFailed
from hmb.security.plain import PlainUsers
from hmb.security.principal import user
from hmb.security.sasl import MechanismServer, start
from kproto import ErrorCode

log = logging.getLogger(__name__)


@dataclass
class SaslExchange:
    """One authentication in progress on a connection."""

    mechanism: str
    server: MechanismServer
    raw: bool  # v0 handshake: the tokens come as bare frames
    reauthenticating: bool


def begin(services: Services, session: Session, mechanism: str, version: int) -> tuple[int, list[str]]:
    """Start an exchange for SaslHandshake; the error code and the mechanisms to answer."""
    enabled = list(services.config.sasl_enabled_mechanisms)
    if not session.security_protocol.startswith("SASL_"):
        return ErrorCode.ILLEGAL_SASL_STATE, enabled
    if session.sasl is not None:
        return ErrorCode.ILLEGAL_SASL_STATE, enabled
    if mechanism not in enabled:
        log.warning(
            "%s asked for SASL mechanism %r, not enabled (%s)", session.peer, mechanism, ", ".join(enabled)
        )
        session.close_after_reply = f"SASL mechanism {mechanism!r} is not enabled"
        return ErrorCode.UNSUPPORTED_SASL_MECHANISM, enabled
    reauthenticating = session.authenticated
    if reauthenticating and mechanism != session.sasl_mechanism:
        session.close_after_reply = f"re-authentication with {mechanism}, not {session.sasl_mechanism}"
        return ErrorCode.ILLEGAL_SASL_STATE, enabled
    credentials = services.credentials
    if credentials is None:
        return ErrorCode.ILLEGAL_SASL_STATE, enabled

    def plain_users() -> PlainUsers:
        return services.plain_users.get(session.listener) or PlainUsers()

    session.sasl = SaslExchange(
        mechanism, start(mechanism, plain_users, credentials), version == 0, reauthenticating
    )
    return ErrorCode.NONE, enabled


@dataclass
class Outcome:
    """What one SASL step answers: an error (or none), the server's token and the session lifetime."""

    error_code: int
    error_message: str | None
    token: bytes
    session_lifetime_ms: int


async def step(services: Services, session: Session, token: bytes) -> Outcome:
    """One token of the exchange in progress (SaslAuthenticate or a bare v0 frame)."""
    exchange = session.sasl
    if exchange is None:
        session.close_after_reply = "SaslAuthenticate without a SaslHandshake"
        return Outcome(ErrorCode.ILLEGAL_SASL_STATE, "SaslAuthenticate before SaslHandshake", b"", 0)
    try:
        # in a worker thread: PLAIN's password hashing would hold every connection for milliseconds
        reply = await trio.to_thread.run_sync(exchange.server.step, token)
        if exchange.server.complete:
            assert exchange.server.username is not None
            principal = user(exchange.server.username)
            if exchange.reauthenticating and principal != session.principal:
                raise AuthenticationFailed(
                    f"re-authentication as {principal} on a connection of {session.principal}"
                )
    except AuthenticationFailed as exc:
        session.sasl = None
        log.warning(
            "SASL %s authentication from %s on listener %s failed: %s",
            exchange.mechanism,
            session.peer,
            session.listener,
            exc,
        )
        await trio.sleep(services.config.failed_authentication_delay_ms / 1000)
        session.close_after_reply = f"failed SASL {exchange.mechanism} authentication"
        message = (
            "Authentication failed during authentication due to invalid credentials "
            f"with SASL mechanism {exchange.mechanism}"
        )
        return Outcome(ErrorCode.SASL_AUTHENTICATION_FAILED, message, b"", 0)
    lifetime = 0
    if exchange.server.complete:
        session.sasl = None
        session.principal = principal
        session.authenticated = True
        session.sasl_mechanism = exchange.mechanism
        lifetime = services.config.connections_max_reauth_ms
        session.reauth_deadline = trio.current_time() + lifetime / 1000 if lifetime > 0 else None
        log.info(
            "%s %sauthenticated as %s with %s on listener %s",
            session.peer,
            "re-" if exchange.reauthenticating else "",
            principal,
            exchange.mechanism,
            session.listener,
        )
    return Outcome(ErrorCode.NONE, None, reply, lifetime)


async def raw_token(services: Services, session: Session, token: bytes) -> bytes:
    """A bare SASL token after a v0 handshake: the answer is a bare size-prefixed token."""
    outcome = await step(services, session, token)
    if outcome.error_code != ErrorCode.NONE:
        raise CloseConnection(session.close_after_reply or "failed SASL authentication")
    return struct.pack(">i", len(outcome.token)) + outcome.token
