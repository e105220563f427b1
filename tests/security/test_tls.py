"""TLS listeners in process: real sockets on 127.0.0.1, the broker in this trio run.

What is checked: a TLS client is served on an SSL listener next to a
PLAINTEXT one; a client certificate names the principal (through
ssl.principal.mapping.rules); ssl.client.auth=required refuses a client
without a certificate or with one from another CA; garbage instead of a
ClientHello and a handshake that never finishes close that connection only,
within bounded time, logged; a listener hmb cannot serve stops the start.
"""

from __future__ import annotations

import ssl
import struct
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import trio
from certs import Pki, make_pki

import kproto
from hmb.api.context import Session
from hmb.broker import Broker
from hmb.config import BrokerConfig, from_properties, parse_properties
from hmb.net import tls as tls_module
from hmb.properties import ConfigError
from kproto import ApiKey


@pytest.fixture
def pki(tmp_path: Path) -> Pki:
    return make_pki(tmp_path / "pki")


def _config(tmp_path: Path, *lines: str) -> BrokerConfig:
    return from_properties(parse_properties("\n".join(lines)), BrokerConfig(log_dirs=(tmp_path / "data",)))


def _tls_lines(pki: Pki, client_auth: str = "none") -> list[str]:
    return [
        "listeners=PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0",
        f"ssl.keystore.location={pki.server}",
        f"ssl.truststore.location={pki.ca}",
        f"ssl.client.auth={client_auth}",
    ]


@asynccontextmanager
async def running(config: BrokerConfig) -> AsyncIterator[tuple[Broker, list[Session]]]:
    broker = Broker(config)
    sessions: list[Session] = []
    dispatch = broker.dispatcher.dispatch

    async def recording(frame: bytes, session: Session) -> Any:
        sessions.append(session)
        return await dispatch(frame, session)

    broker.dispatcher.dispatch = recording  # type: ignore[method-assign]
    async with trio.open_nursery() as nursery:
        await nursery.start(broker.run)
        yield broker, sessions
        nursery.cancel_scope.cancel()


def _client_context(pki: Pki, cert: Path | None = None, key: Path | None = None) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(pki.ca))
    if cert is not None:
        context.load_cert_chain(str(cert), str(key))
    return context


async def _api_versions(stream: trio.abc.Stream) -> int:
    """Send ApiVersions v0 and return the answer's error code."""
    await stream.send_all(kproto.encode_request(ApiKey.API_VERSIONS, 0, 7, {}, client_id="tls-test"))
    data = b""
    while len(data) < 4 or len(data) < 4 + struct.unpack(">i", data[:4])[0]:
        chunk = await stream.receive_some(65536)
        if not chunk:
            raise EOFError("closed")
        data += chunk
    return struct.unpack(">h", data[8:10])[0]


async def _connect_tls(broker: Broker, context: ssl.SSLContext) -> trio.SSLStream[trio.SocketStream]:
    host, port = broker.bound["SSL"]
    tcp = await trio.open_tcp_stream(host, port)
    stream = trio.SSLStream(tcp, context, server_hostname="127.0.0.1")
    await stream.do_handshake()
    return stream


async def test_ssl_listener_serves_next_to_plaintext(tmp_path: Path, pki: Pki) -> None:
    async with running(_config(tmp_path, *_tls_lines(pki))) as (broker, sessions):
        assert set(broker.bound) == {"PLAINTEXT", "SSL"}
        stream = await _connect_tls(broker, _client_context(pki))
        assert await _api_versions(stream) == 0
        assert sessions[-1].listener == "SSL" and sessions[-1].security_protocol == "SSL"
        assert str(sessions[-1].principal) == "User:ANONYMOUS"  # no client certificate asked for
        plain = await trio.open_tcp_stream(*broker.bound["PLAINTEXT"])
        assert await _api_versions(plain) == 0
        assert sessions[-1].listener == "PLAINTEXT"
        assert broker.advertised("SSL").port == broker.bound["SSL"][1]


async def test_client_certificate_names_the_principal(tmp_path: Path, pki: Pki) -> None:
    rules = "ssl.principal.mapping.rules=RULE:^CN=([a-z]+),OU=eng,O=hmb$/$1/U,DEFAULT"
    async with running(_config(tmp_path, *_tls_lines(pki, "required"), rules)) as (broker, sessions):
        stream = await _connect_tls(broker, _client_context(pki, pki.client_cert, pki.client_key))
        assert await _api_versions(stream) == 0
        assert str(sessions[-1].principal) == "User:ALICE"
    async with running(_config(tmp_path, *_tls_lines(pki, "requested"))) as (broker, sessions):
        stream = await _connect_tls(broker, _client_context(pki, pki.client_cert, pki.client_key))
        assert await _api_versions(stream) == 0
        assert str(sessions[-1].principal) == "User:CN=alice,OU=eng,O=hmb"  # DEFAULT: the whole subject
        anonymous = await _connect_tls(broker, _client_context(pki))  # requested: may come without
        assert await _api_versions(anonymous) == 0
        assert str(sessions[-1].principal) == "User:ANONYMOUS"


async def _refused(broker: Broker, context: ssl.SSLContext) -> None:
    """The connection does not get an answer: the handshake or the first read fails."""
    with trio.fail_after(10):
        with pytest.raises((trio.BrokenResourceError, EOFError, ssl.SSLError)):
            stream = await _connect_tls(broker, context)
            await _api_versions(stream)


async def test_required_client_auth_refuses_missing_and_foreign_certificates(
    tmp_path: Path, pki: Pki, caplog: pytest.LogCaptureFixture
) -> None:
    async with running(_config(tmp_path, *_tls_lines(pki, "required"))) as (broker, sessions):
        await _refused(broker, _client_context(pki))
        await _refused(broker, _client_context(pki, pki.rogue_cert, pki.rogue_key))
        assert sessions == []  # nothing reached the dispatcher
        good = await _connect_tls(broker, _client_context(pki, pki.client_cert, pki.client_key))
        assert await _api_versions(good) == 0  # the others did not disturb anyone
    assert "TLS handshake failed" in caplog.text


async def test_garbage_and_stalled_handshakes_close_only_that_connection(
    tmp_path: Path, pki: Pki, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tls_module, "HANDSHAKE_TIMEOUT", 0.5)
    async with running(_config(tmp_path, *_tls_lines(pki))) as (broker, _):
        garbage = await trio.open_tcp_stream(*broker.bound["SSL"])
        stalled = await trio.open_tcp_stream(*broker.bound["SSL"])
        await garbage.send_all(b"\x00\x00\x00\x10GET / HTTP/1.1\r\n\r\n" * 4)
        with trio.fail_after(5):
            while await garbage.receive_some(4096):
                pass  # an alert, maybe: then the close
            good = await _connect_tls(broker, _client_context(pki))  # served meanwhile
            assert await _api_versions(good) == 0
            while await stalled.receive_some(4096):
                pass  # closed after the handshake timeout
    assert "TLS handshake failed" in caplog.text
    assert "TLS handshake not finished within 0.5 s" in caplog.text


@pytest.mark.parametrize(
    ("lines", "named"),
    [
        (["listeners=SSL://127.0.0.1:0"], "SSL"),  # no keystore
        (["listeners=SASL_SSL://127.0.0.1:0", "ssl.keystore.location=/nonexistent.pem"], "SASL_SSL"),
        (["listeners=MINE://127.0.0.1:0", "listener.security.protocol.map=MINE:SSL"], "MINE"),
        (["listeners=SASL_PLAINTEXT://127.0.0.1:0", "sasl.enabled.mechanisms=GSSAPI"], "SASL_PLAINTEXT"),
    ],
)
async def test_a_listener_that_cannot_be_served_stops_the_start(
    tmp_path: Path, lines: list[str], named: str
) -> None:
    with pytest.raises(ConfigError, match=f"listener {named}"):
        Broker(_config(tmp_path, *lines))


def test_cipher_suites_and_protocols(tmp_path: Path, pki: Pki) -> None:
    config = _config(tmp_path, *_tls_lines(pki), "ssl.enabled.protocols=TLSv1.3")
    context = tls_module.server_context(config, "SSL")
    assert context.minimum_version == ssl.TLSVersion.TLSv1_3
    with pytest.raises(ConfigError, match=r"ssl\.cipher\.suites"):
        tls_module.server_context(
            _config(tmp_path, *_tls_lines(pki), "ssl.cipher.suites=NOT-A-CIPHER"), "SSL"
        )


def test_hmb_serve_names_the_listener_it_cannot_serve(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from hmb.cli import main

    code = main(
        [
            "--data-dir",
            str(tmp_path / "d"),
            "--override",
            "listeners=PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0",
        ]
    )
    assert code == 2
    assert "listener SSL uses TLS but ssl.keystore.location is not set" in capsys.readouterr().err


def test_per_listener_ssl_settings_win(tmp_path: Path, pki: Pki) -> None:
    config = _config(
        tmp_path,
        "listeners=PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0,INTERNAL://127.0.0.1:0",
        "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SSL:SSL,INTERNAL:SSL",
        f"ssl.keystore.location={pki.server}",
        f"listener.name.internal.ssl.truststore.location={pki.ca}",
        "listener.name.internal.ssl.client.auth=required",
    )
    assert tls_module.server_context(config, "SSL").verify_mode == ssl.CERT_NONE
    assert tls_module.server_context(config, "INTERNAL").verify_mode == ssl.CERT_REQUIRED
