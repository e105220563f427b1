"""In-process helpers for the SASL and ACL handler tests: a broker over a temporary log,
sessions as a SASL listener would start them, and clients' SASL exchanges."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from hmb.api.context import CloseConnection, Session
from hmb_client.sasl import client_for, scram_salted_password
from kproto import ApiKey, ErrorCode
from tests.api.harness import InProcessBroker

JAAS = (
    "listener.name.sasl_plaintext.plain.sasl.jaas.config="
    'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
    'password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";'
)
SASL_LINES = ("listeners=SASL_PLAINTEXT://127.0.0.1:0,PLAINTEXT://127.0.0.1:0", JAAS)
PEER = "10.1.2.3:5555"


def sasl_broker(tmp_path: Path, *lines: str) -> InProcessBroker:
    return InProcessBroker(
        tmp_path / "data", *SASL_LINES, "connection.failed.authentication.delay.ms=0", *lines
    )


def sasl_session(listener: str = "SASL_PLAINTEXT") -> Session:
    return Session(peer=PEER, listener=listener, security_protocol=listener, authenticated=False)


async def authenticate(
    b: InProcessBroker, session: Session, mechanism: str, user: str, password: str, version: int = 1
) -> Any:
    """Handshake and exchange; the last SaslAuthenticate answer (raises on a closed connection)."""
    hs = await b.request(ApiKey.SASL_HANDSHAKE, 1, {"mechanism": mechanism}, session=session)
    assert hs.error_code == ErrorCode.NONE, hs
    client = client_for(mechanism, user, password)
    token: bytes | None = client.first()
    answer = None
    while token is not None:
        answer = await b.request(ApiKey.SASL_AUTHENTICATE, version, {"auth_bytes": token}, session=session)
        if answer.error_code != ErrorCode.NONE:
            return answer
        token = client.answer(bytes(answer.auth_bytes))
    return answer


async def add_scram_user(
    b: InProcessBroker, user: str, password: str, mechanism: str, iterations: int = 4096
) -> Any:
    salt = os.urandom(16)
    body = {
        "deletions": [],
        "upsertions": [
            {
                "name": user,
                "mechanism": {"SCRAM-SHA-256": 1, "SCRAM-SHA-512": 2}[mechanism],
                "iterations": iterations,
                "salt": salt,
                "salted_password": scram_salted_password(mechanism, password, salt, iterations),
            }
        ],
    }
    return await b.request(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, 0, body, session=Session(PEER))


__all__ = ["CloseConnection"]
