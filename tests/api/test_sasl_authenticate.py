"""SaslAuthenticate v0-v2 in process: PLAIN and SCRAM, success and the attacker's side.

v1 adds the session lifetime (re-authentication, KIP-368), v2 is flexible.

Each negative test asserts the error the client sees, that the connection
ends after it, and that the session stayed unauthenticated (nothing leaked).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from hmb.api.context import CloseConnection
from kproto import ApiKey, ErrorCode
from tests.security.sasl_support import PEER, add_scram_user, authenticate, sasl_broker, sasl_session

METADATA_ALL = {
    "topics": None,
    "allow_auto_topic_creation": False,
    "include_cluster_authorized_operations": False,
    "include_topic_authorized_operations": False,
}


async def test_plain_then_requests_are_served(tmp_path: Path) -> None:
    b = sasl_broker(tmp_path)
    session = sasl_session()
    answer = await authenticate(b, session, "PLAIN", "alice", "alice-secret")
    assert answer.error_code == ErrorCode.NONE and answer.session_lifetime_ms == 0
    assert session.authenticated and str(session.principal) == "User:alice"
    meta = await b.request(ApiKey.METADATA, 8, METADATA_ALL, session=session)
    assert meta.brokers[0].port == b.broker.advertised("SASL_PLAINTEXT").port


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
async def test_scram_with_stored_credentials(tmp_path: Path, mechanism: str) -> None:
    b = sasl_broker(tmp_path)
    added = await add_scram_user(b, "bob", "bob-pw", mechanism, iterations=8192)
    assert added.results[0].error_code == ErrorCode.NONE
    session = sasl_session()
    answer = await authenticate(b, session, mechanism, "bob", "bob-pw")
    assert answer.error_code == ErrorCode.NONE and str(session.principal) == "User:bob"
    assert "bob-pw" not in (tmp_path / "data" / "scram-credentials.json").read_text()


@pytest.mark.parametrize(
    ("mechanism", "user", "password"),
    [
        ("PLAIN", "alice", "wrong"),
        ("PLAIN", "mallory", "alice-secret"),
        ("SCRAM-SHA-256", "bob", "wrong"),
        ("SCRAM-SHA-256", "nobody", "bob-pw"),
    ],
)
async def test_failed_authentication_is_answered_delayed_logged_and_closes(
    tmp_path: Path, mechanism: str, user: str, password: str, caplog: pytest.LogCaptureFixture
) -> None:
    b = sasl_broker(tmp_path, "connection.failed.authentication.delay.ms=200")
    await add_scram_user(b, "bob", "bob-pw", "SCRAM-SHA-256")
    session = sasl_session()
    started = trio.current_time()
    answer = await authenticate(b, session, mechanism, user, password)
    assert trio.current_time() - started >= 0.2  # guessing is slow
    assert answer.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
    assert mechanism in answer.error_message
    assert session.close_after_reply is not None  # the answer is the connection's last
    assert not session.authenticated and str(session.principal) == "User:ANONYMOUS"
    assert PEER in caplog.text and "failed" in caplog.text


@pytest.mark.parametrize(
    ("api_key", "version", "body"),
    [
        (ApiKey.METADATA, 8, METADATA_ALL),
        (ApiKey.PRODUCE, 3, {"transactional_id": None, "acks": 1, "timeout_ms": 1000, "topic_data": []}),
        (ApiKey.FIND_COORDINATOR, 1, {"key": "g", "key_type": 0}),
    ],
)
async def test_request_before_authentication_closes(
    tmp_path: Path, api_key: int, version: int, body: dict
) -> None:  # type: ignore[type-arg]
    b = sasl_broker(tmp_path)
    session = sasl_session()
    versions = await b.request(ApiKey.API_VERSIONS, 0, {}, session=session)  # allowed before
    assert versions.error_code == ErrorCode.NONE
    with pytest.raises(CloseConnection, match="before SASL authentication"):
        await b.send(api_key, version, body, session=session)
    assert b.broker.logs.topics.keys() <= {"__consumer_offsets"}  # nothing was created or written


async def test_expired_authentication_closes_and_reauthentication_renews(tmp_path: Path) -> None:
    b = sasl_broker(tmp_path, "connections.max.reauth.ms=300")
    session = sasl_session()
    answer = await authenticate(b, session, "PLAIN", "alice", "alice-secret")
    assert answer.session_lifetime_ms == 300
    await b.request(ApiKey.METADATA, 8, METADATA_ALL, session=session)  # within its lifetime
    # re-authentication (KIP-368) on the same connection renews the lifetime
    assert session.reauth_deadline is not None
    first_deadline = session.reauth_deadline
    again = await authenticate(b, session, "PLAIN", "alice", "alice-secret")
    assert again.error_code == ErrorCode.NONE and session.reauth_deadline >= first_deadline
    await trio.sleep_until(session.reauth_deadline + 0.01)
    await b.request(ApiKey.API_VERSIONS, 0, {}, session=session)  # still allowed
    with pytest.raises(CloseConnection, match="expired"):
        await b.send(ApiKey.METADATA, 8, METADATA_ALL, session=session)


async def test_reauthentication_cannot_change_principal_or_mechanism(tmp_path: Path) -> None:
    b = sasl_broker(tmp_path, "connections.max.reauth.ms=60000")
    session = sasl_session()
    await authenticate(b, session, "PLAIN", "alice", "alice-secret")
    answer = await authenticate(b, session, "PLAIN", "admin", "admin-secret")
    assert answer.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
    assert str(session.principal) == "User:alice" and session.close_after_reply is not None
    other = sasl_session()
    await authenticate(b, other, "PLAIN", "alice", "alice-secret")
    hs = await b.request(ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "SCRAM-SHA-256"}, session=other)
    assert hs.error_code == ErrorCode.ILLEGAL_SASL_STATE
