"""SaslHandshake v0-v1 in process: choosing a mechanism, and what a handshake may not do.

v0 is followed by bare SASL tokens (no SaslAuthenticate), v1 by SaslAuthenticate.
A mechanism that is not enabled is UNSUPPORTED_SASL_MECHANISM with the enabled
ones; a handshake on a listener without SASL, or a SaslAuthenticate before any
handshake, is ILLEGAL_SASL_STATE.

Each negative test asserts the error the client sees, that the connection
ends after it, and that the session stayed unauthenticated (nothing leaked).
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from hmb.api.context import CloseConnection, Session
from hmb_client.sasl import PlainClient
from kproto import ApiKey, ErrorCode
from tests.security.sasl_support import PEER, sasl_broker, sasl_session

METADATA_ALL = {
    "topics": None,
    "allow_auto_topic_creation": False,
    "include_cluster_authorized_operations": False,
    "include_topic_authorized_operations": False,
}


async def test_mechanism_not_enabled(tmp_path: Path) -> None:
    b = sasl_broker(tmp_path, "sasl.enabled.mechanisms=SCRAM-SHA-512")
    session = sasl_session()
    hs = await b.request(ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"}, session=session)
    assert hs.error_code == ErrorCode.UNSUPPORTED_SASL_MECHANISM and hs.mechanisms == ["SCRAM-SHA-512"]
    assert session.close_after_reply is not None and not session.authenticated


async def test_v0_handshake_then_bare_tokens(tmp_path: Path) -> None:
    b = sasl_broker(tmp_path)
    session = sasl_session()
    hs = await b.request(ApiKey.SASL_HANDSHAKE, 0, {"mechanism": "PLAIN"}, session=session)
    assert hs.error_code == ErrorCode.NONE
    token = PlainClient("alice", "alice-secret").first()
    reply = await b.dispatch(struct.pack(">i", len(token)) + token, session)
    assert reply == b"\0\0\0\0" and session.authenticated
    bad = sasl_session()
    await b.request(ApiKey.SASL_HANDSHAKE, 0, {"mechanism": "PLAIN"}, session=bad)
    token = PlainClient("alice", "nope").first()
    with pytest.raises(CloseConnection):
        await b.dispatch(struct.pack(">i", len(token)) + token, bad)
    assert not bad.authenticated


async def test_sasl_on_a_plaintext_listener_and_out_of_order(tmp_path: Path) -> None:
    b = sasl_broker(tmp_path)
    plain = Session(peer=PEER)
    hs = await b.request(ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"}, session=plain)
    assert hs.error_code == ErrorCode.ILLEGAL_SASL_STATE
    session = sasl_session()
    early = await b.request(ApiKey.SASL_AUTHENTICATE, 1, {"auth_bytes": b"\0a\0b"}, session=session)
    assert early.error_code == ErrorCode.ILLEGAL_SASL_STATE and not session.authenticated
