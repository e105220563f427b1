"""Fuzzing the security paths: SASL frames and TLS records.

Two levels.  The SASL engines and handlers in process: whatever bytes a
client sends as tokens (SaslAuthenticate, or bare v0 frames), the answer is
a response or a close of that connection, never another exception.  TLS
records against ``hmb serve``: garbage, truncated and random records on
the SSL listener close those connections, the broker stays up, a good TLS
client is still served, and its memory does not grow with the garbage.
"""

from __future__ import annotations

import os
import socket
import ssl
import struct
from pathlib import Path

import pytest
from broker_process import BrokerProcess
from certs import Pki, make_pki
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kproto
from hmb.api.context import CloseConnection
from hmb.security.errors import AuthenticationFailed
from hmb.security.plain import PlainServer, PlainUsers
from hmb.security.scram import ScramServer, credential_from_password
from kproto import ApiKey, ErrorCode

from .sasl_support import add_scram_user, sasl_broker, sasl_session

CREDENTIAL = credential_from_password("sha256", "pw", 4096, b"salt" * 4)
TOKENS = st.one_of(
    st.binary(max_size=600),
    st.text(max_size=200).map(str.encode),
    st.builds(lambda a, b: f"n,,n={a},r={b}".encode(), st.text(max_size=40), st.text(max_size=40)),
    st.builds(lambda a, b: f"c=biws,r={a},p={b}".encode(), st.text(max_size=60), st.text(max_size=60)),
)


@settings(max_examples=300, deadline=None)
@given(first=TOKENS, final=TOKENS)
def test_scram_engine_only_ever_refuses(first: bytes, final: bytes) -> None:
    server = ScramServer("sha256", lambda user: CREDENTIAL)
    try:
        server.step(first)
        server.step(final)
    except AuthenticationFailed:
        return
    assert not server.complete  # random bytes never prove the password


@settings(max_examples=200, deadline=None)
@given(token=TOKENS)
def test_plain_engine_only_ever_refuses(token: bytes) -> None:
    server = PlainServer(PlainUsers({"alice": "secret"}))
    try:
        server.step(token)
    except AuthenticationFailed:
        return
    raise AssertionError(f"{token!r} authenticated")


async def test_sasl_frames_through_the_dispatcher(tmp_path: Path) -> None:
    b = sasl_broker(tmp_path)
    await add_scram_user(b, "bob", "pw", "SCRAM-SHA-256")
    rng = __import__("random").Random(1234)
    for i in range(150):
        session = sasl_session()
        mechanism = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "GSSAPI", ""][i % 5]
        version = i % 2
        hs = await b.request(ApiKey.SASL_HANDSHAKE, version, {"mechanism": mechanism}, session=session)
        token = rng.randbytes(rng.randrange(0, 300))
        try:
            if version == 0 and hs.error_code == ErrorCode.NONE:
                await b.dispatch(struct.pack(">i", len(token)) + token, session)  # a bare v0 token
            else:
                answer = await b.request(ApiKey.SASL_AUTHENTICATE, 1, {"auth_bytes": token}, session=session)
                assert answer.error_code in (
                    ErrorCode.NONE,
                    ErrorCode.SASL_AUTHENTICATION_FAILED,
                    ErrorCode.ILLEGAL_SASL_STATE,
                )
        except CloseConnection:
            pass
        assert not session.authenticated or session.principal.name == "bob"
        # whatever happened, a request before authentication is still refused
        if not session.authenticated:
            with pytest.raises(CloseConnection):
                await b.send(ApiKey.METADATA, 1, {"topics": None}, session=session)


# ------------------------------------------------------------------ TLS records against the process


@pytest.fixture(scope="module")
def tls_broker(tmp_path_factory: pytest.TempPathFactory) -> tuple[BrokerProcess, int, Pki]:
    pki = make_pki(tmp_path_factory.mktemp("pki"))
    data = tmp_path_factory.mktemp("tls") / "data"
    b = BrokerProcess(
        data,
        "listeners=PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0",
        f"ssl.keystore.location={pki.server}",
        f"ssl.truststore.location={pki.ca}",
        "ssl.client.auth=requested",
    ).start()
    port = int(b.wait_for_log(r"listening on [\d.]+:(\d+) \(listener SSL").group(1))
    yield b, port, pki  # type: ignore[misc]
    b.kill()


def _drain(sock: socket.socket) -> None:
    try:
        while sock.recv(65536):
            pass
    except (ConnectionResetError, TimeoutError, OSError):
        pass


def _good_tls_client(port: int, pki: Pki) -> None:
    context = ssl.create_default_context(cafile=str(pki.ca))
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname="127.0.0.1") as s:
            s.sendall(kproto.encode_request(ApiKey.API_VERSIONS, 0, 1, {}, client_id="fuzz"))
            size = struct.unpack(">i", s.recv(4))[0]
            assert size > 0


def _record(content_type: int, version: int, body: bytes) -> bytes:
    return struct.pack(">BHH", content_type, version, len(body)) + body


TLS_GARBAGE = st.one_of(
    st.binary(min_size=1, max_size=4096),
    st.builds(
        _record, st.integers(0, 255), st.sampled_from([0x0301, 0x0303, 0xFFFF]), st.binary(max_size=2000)
    ),
    st.builds(
        _record, st.just(22), st.just(0x0301), st.binary(max_size=300).map(lambda b: b"\x01" + b)
    ),  # a "ClientHello"
)


def test_tls_garbage_records(tls_broker: tuple[BrokerProcess, int, Pki]) -> None:
    broker, port, pki = tls_broker
    _good_tls_client(port, pki)
    before = broker.rss_bytes()

    @settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(data=TLS_GARBAGE)
    def one(data: bytes) -> None:
        with socket.create_connection(("127.0.0.1", port), timeout=15) as s:
            try:
                s.sendall(data)
                s.shutdown(socket.SHUT_WR)
            except (BrokenPipeError, ConnectionResetError):
                pass
            _drain(s)  # the broker closes it: bounded by the timeout

    one()
    for _ in range(50):  # plus large random blobs
        with socket.create_connection(("127.0.0.1", port), timeout=15) as s:
            try:
                s.sendall(os.urandom(64 * 1024))
            except (BrokenPipeError, ConnectionResetError):
                pass
            _drain(s)
    assert broker.alive()
    _good_tls_client(port, pki)
    grown = broker.rss_bytes() - before
    assert grown < 32 << 20, f"the broker grew by {grown >> 20} MiB over garbage connections"
    refused = broker.log_text().count("TLS handshake failed")
    assert refused >= 100, f"only {refused} garbage connections were refused"
