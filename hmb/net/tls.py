"""TLS for SSL and SASL_SSL listeners: the server context from Kafka's ``ssl.*``
settings, the handshake, and a :class:`hmb.net.transport.Transport` over
trio's ``SSLStream``.

Rules:

* Each setting may be given for one listener as
  ``listener.name.<listener>.ssl.<setting>`` (Kafka's per-listener form); it
  wins over the broker-wide ``ssl.<setting>``.
* Keys and certificates are PEM (``ssl.keystore.type=PEM``): the keystore
  file holds the certificate chain and the private key, the truststore the
  CA certificates a client certificate must chain to.
* ``ssl.client.auth``: ``required`` refuses a client without a certificate
  from the truststore's CAs, ``requested`` checks one when shown, ``none``
  does not ask.  A checked certificate names the connection's principal.
* A handshake that fails (garbage instead of a ClientHello, a certificate
  from another CA) or does not finish within the handshake timeout ends that
  connection only, with a logged reason.
* A file region cannot be sent with sendfile over TLS: it is read and sent
  through the encryption in chunks.
"""

from __future__ import annotations

import os
import ssl
from typing import TYPE_CHECKING

import trio

from hmb.properties import ConfigError
from hmb.security.principal import PrincipalMapper, subject_name

if TYPE_CHECKING:
    from hmb.config import BrokerConfig

HANDSHAKE_TIMEOUT = 10.0  # seconds a client has to finish the TLS handshake
READ_SIZE = 256 * 1024
_FILE_CHUNK = 256 * 1024

_VERSIONS = {"TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}
_CLIENT_AUTH = {"none": ssl.CERT_NONE, "requested": ssl.CERT_OPTIONAL, "required": ssl.CERT_REQUIRED}


def _setting(config: BrokerConfig, listener: str, key: str, default: object) -> object:
    """``listener.name.<listener>.<key>`` when given, else the broker-wide value."""
    override = config.listener_setting(listener, key)
    return default if override is None else override.strip()


def server_context(config: BrokerConfig, listener: str) -> ssl.SSLContext:
    """The TLS server context of ``listener``; ConfigError names the listener and the setting."""
    keystore = _setting(config, listener, "ssl.keystore.location", config.ssl_keystore_location)
    if not keystore:
        raise ConfigError(f"listener {listener} uses TLS but ssl.keystore.location is not set")
    password = _setting(config, listener, "ssl.key.password", config.ssl_key_password)
    truststore = _setting(config, listener, "ssl.truststore.location", config.ssl_truststore_location)
    client_auth = str(_setting(config, listener, "ssl.client.auth", config.ssl_client_auth)).lower()
    protocols = config.ssl_enabled_protocols
    if client_auth not in _CLIENT_AUTH:
        raise ConfigError(f"listener {listener}: ssl.client.auth must be none, requested or required")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        context.load_cert_chain(str(keystore), password=None if password is None else str(password))
    except (OSError, ssl.SSLError) as exc:
        raise ConfigError(
            f"listener {listener}: cannot load ssl.keystore.location {keystore}: {exc}"
        ) from None
    versions = sorted(_VERSIONS[p] for p in protocols)
    context.minimum_version, context.maximum_version = versions[0], versions[-1]
    if config.ssl_cipher_suites:
        try:
            context.set_ciphers(":".join(config.ssl_cipher_suites))
        except ssl.SSLError as exc:
            raise ConfigError(f"listener {listener}: ssl.cipher.suites: {exc}") from None
    context.verify_mode = _CLIENT_AUTH[client_auth]
    if client_auth != "none":
        if not truststore:
            raise ConfigError(
                f"listener {listener}: ssl.client.auth={client_auth} needs ssl.truststore.location"
            )
        try:
            context.load_verify_locations(cafile=str(truststore))
        except (OSError, ssl.SSLError) as exc:
            raise ConfigError(
                f"listener {listener}: cannot load ssl.truststore.location {truststore}: {exc}"
            ) from None
    return context


class TlsHandshakeError(Exception):
    """The handshake failed or timed out; the message is the logged reason."""


async def handshake(
    stream: trio.SocketStream, context: ssl.SSLContext, timeout: float = HANDSHAKE_TIMEOUT
) -> trio.SSLStream[trio.SocketStream]:
    """The TLS stream over ``stream`` once the handshake is done, else TlsHandshakeError."""
    tls = trio.SSLStream(stream, context, server_side=True)
    with trio.move_on_after(timeout) as scope:
        try:
            await tls.do_handshake()
        except trio.BrokenResourceError as exc:
            cause = exc.__cause__ or exc
            raise TlsHandshakeError(f"TLS handshake failed: {cause}") from None
    if scope.cancelled_caught:
        raise TlsHandshakeError(f"TLS handshake not finished within {timeout:g} s")
    return tls


def peer_principal_name(tls: trio.SSLStream[trio.SocketStream], mapper: PrincipalMapper) -> str | None:
    """The user name of a checked client certificate, None when there is none.

    ValueError when no mapping rule matches its subject.
    """
    cert = tls.getpeercert()
    if not cert or "subject" not in cert:
        return None
    return mapper.name_of(subject_name(cert["subject"]))


class TlsTransport:
    """A :class:`hmb.net.transport.Transport` over an established ``SSLStream``."""

    closes_at_once = False  # aclose_forcefully checkpoints

    def __init__(self, tls: trio.SSLStream[trio.SocketStream], peer: str) -> None:
        self.tls = tls
        self.peer = peer

    async def receive_some(self) -> bytes:
        return bytes(await self.tls.receive_some(READ_SIZE))

    async def send_all(self, data: bytes | bytearray) -> None:
        await self.tls.send_all(data)

    async def send_file(self, fd: int, position: int, length: int) -> None:
        """Read the region in chunks and encrypt them: no sendfile through TLS."""
        end = position + length
        while position < end:
            chunk = os.pread(fd, min(_FILE_CHUNK, end - position), position)
            if not chunk:
                raise OSError(f"file region ends early at {position}")
            await self.tls.send_all(chunk)
            position += len(chunk)

    async def aclose(self) -> None:
        # no close_notify wait: a client gone or misbehaving must not hold the task
        await trio.aclose_forcefully(self.tls)
