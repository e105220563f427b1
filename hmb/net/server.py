"""The listeners: one TCP server per ``listeners`` entry, each with its security protocol.

Follows trio's ``serve_listeners``: ``serve`` takes ``task_status`` and
reports the bound address of every listener (by name) once all listen, so a
caller (or a test) can bind port 0 and learn the real ports.

Rules:

* A listener's security protocol comes from ``listener.security.protocol.map``:
  PLAINTEXT and SASL_PLAINTEXT are plain TCP, SSL and SASL_SSL are TLS
  (:mod:`hmb.net.tls`).  A listener hmb cannot serve (TLS without a keystore,
  SASL while the broker has no SASL handlers, a SASL mechanism hmb does not
  have) stops the start with a :class:`ConfigError` naming it: nothing is
  accepted and silently not served.
* Every connection starts a :class:`Session` saying which listener it came
  in on; an SSL connection with a checked client certificate carries its
  principal; a SASL connection starts unauthenticated (the dispatcher lets
  it send only ApiVersions and the SASL requests until it authenticates).
* A failed or slow TLS handshake closes that connection only, logged.
* The accept loop is ours, not ``trio.serve_listeners``: that one closes
  every stream with ``aclose_forcefully`` after its handler, a cancelled
  checkpoint costing a tenth of the broker's CPU per connection opened,
  though our connection has closed its transport already.  Like trio's, it
  waits and retries when accept fails for lack of file descriptors or
  memory, and lets any other accept error end the server.
"""

from __future__ import annotations

import errno
import logging
import os
import ssl
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import trio

from hmb.api.context import Session
from hmb.net import tls as tls_settings
from hmb.net.connection import Connection
from hmb.net.fairness import FairGate
from hmb.net.tls import (
    TlsHandshakeError,
    TlsTransport,
    handshake,
    peer_principal_name,
    server_context,
)
from hmb.net.transport import PlainTransport, Transport, peer_of
from hmb.properties import ConfigError, Listener
from hmb.security.principal import PrincipalMapper, user
from hmb.security.sasl import SUPPORTED_MECHANISMS

if TYPE_CHECKING:
    from hmb.api.dispatch import Dispatcher
    from hmb.config import BrokerConfig

log = logging.getLogger(__name__)

Bound = dict[str, tuple[str, int]]
"""listener name -> the (host, port) it is bound to."""


@dataclass(frozen=True)
class Endpoint:
    """One listener, ready to serve: its address, its protocol and, for TLS, its context."""

    listener: Listener
    protocol: str
    tls: ssl.SSLContext | None

    @property
    def sasl(self) -> bool:
        return self.protocol.startswith("SASL_")


def endpoints(config: BrokerConfig, dispatcher: Dispatcher) -> list[Endpoint]:
    """Every listener with what it needs; ConfigError names one that cannot be served."""
    out = []
    for listener in config.listeners:
        protocol = config.security_protocol(listener.name)
        tls = server_context(config, listener.name) if protocol in ("SSL", "SASL_SSL") else None
        if protocol.startswith("SASL_"):
            if not dispatcher.serves_sasl:
                raise ConfigError(
                    f"listener {listener.name} uses {protocol}, which this broker cannot serve yet"
                )
            unknown = [m for m in config.sasl_enabled_mechanisms if m not in SUPPORTED_MECHANISMS]
            if unknown:
                raise ConfigError(
                    f"listener {listener.name}: sasl.enabled.mechanisms has {', '.join(unknown)}; "
                    f"hmb has {', '.join(SUPPORTED_MECHANISMS)}"
                )
        out.append(Endpoint(listener, protocol, tls))
    return out


async def _open(listener: Listener) -> list[trio.SocketListener]:
    try:
        return await trio.open_tcp_listeners(listener.port, host=listener.host, backlog=1024)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise OSError(
                exc.errno,
                f"listener {listener.name} {listener} is already in use: is another broker running?",
            ) from None
        raise


async def serve(
    config: BrokerConfig,
    dispatcher: Dispatcher,
    ready: list[Endpoint],
    *,
    handshake_timeout: float | None = None,
    task_status: trio.TaskStatus[Bound] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``ready`` (from :func:`endpoints`, which checks them before anything starts)."""
    mapper = PrincipalMapper(config.ssl_principal_mapping_rules)
    gate = FairGate()  # one for every listener: who is handled next is a broker-wide question
    timeout = tls_settings.HANDSHAKE_TIMEOUT if handshake_timeout is None else handshake_timeout

    def handler(endpoint: Endpoint, nursery: trio.Nursery):  # type: ignore[no-untyped-def]
        name, protocol = endpoint.listener.name, endpoint.protocol

        async def handle(stream: trio.SocketStream) -> None:
            peer = peer_of(stream)
            session = Session(
                peer=peer, listener=name, security_protocol=protocol, authenticated=not endpoint.sasl
            )
            transport: Transport
            if endpoint.tls is None:
                transport = PlainTransport(stream, peer)
            else:
                try:
                    tls = await handshake(stream, endpoint.tls, timeout)
                    subject_user = peer_principal_name(tls, mapper)
                except (TlsHandshakeError, ValueError) as exc:
                    log.warning("closing connection from %s on listener %s: %s", peer, name, exc)
                    await trio.aclose_forcefully(stream)
                    return
                if subject_user is not None and not endpoint.sasl:
                    session.principal = user(subject_user)
                transport = TlsTransport(tls, peer)
            connection = Connection(
                transport,
                dispatcher,
                nursery=nursery,  # a connection's second task, if it needs one, runs beside it
                gate=gate,
                session=session,
                queued_max_requests=config.queued_max_requests,
                max_frame_size=config.socket_request_max_bytes,
            )
            await connection.run()

        return handle

    bound: Bound = {}
    async with trio.open_nursery() as nursery:
        nursery.start_soon(gate.run)
        for endpoint in ready:
            sockets = await _open(endpoint.listener)
            host, port = sockets[0].socket.getsockname()[:2]
            bound[endpoint.listener.name] = (host, port)
            for sock in sockets:
                nursery.start_soon(_accept_loop, sock, handler(endpoint, nursery), nursery)
        task_status.started(bound)


# accept failures that mean "the machine is out of something for now": wait, retry
_ACCEPT_CAPACITY_ERRNOS = {errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.ENOBUFS}
_ACCEPT_RETRY_S = 0.1


StreamHandler = Callable[[trio.SocketStream], Awaitable[None]]


async def _accept_loop(listener: trio.SocketListener, handle: StreamHandler, nursery: trio.Nursery) -> None:
    async with listener:
        while True:
            try:
                stream = await listener.accept()
            except OSError as exc:
                if exc.errno not in _ACCEPT_CAPACITY_ERRNOS:
                    raise
                log.error("accept failed: %s; retrying in %.1f s", os.strerror(exc.errno), _ACCEPT_RETRY_S)
                await trio.sleep(_ACCEPT_RETRY_S)  # back-off while descriptors or memory run out
            else:
                nursery.start_soon(_serve_one, stream, handle)


async def _serve_one(stream: trio.SocketStream, handle: StreamHandler) -> None:
    try:
        await handle(stream)
    finally:
        if stream.socket.fileno() != -1:  # the handler failed before its connection closed the socket
            await trio.aclose_forcefully(stream)
