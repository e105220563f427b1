"""The SASL mechanism engines, sans-I/O: RFC test vectors and the attacker's inputs."""

from __future__ import annotations

import base64

import pytest

from hmb.properties import ConfigError
from hmb.security.credentials import CredentialStore
from hmb.security.errors import AuthenticationFailed
from hmb.security.plain import PlainServer, PlainUsers, parse_jaas
from hmb.security.scram import ScramServer, credential_from_password


def _vector_server(hash_name: str, password: str, salt_b64: str, server_nonce: str) -> ScramServer:
    credential = credential_from_password(hash_name, password, 4096, base64.b64decode(salt_b64))
    return ScramServer(
        hash_name, lambda user: credential if user == "user" else None, nonce=lambda: server_nonce
    )


def test_rfc7677_scram_sha256_vector() -> None:
    server = _vector_server("sha256", "pencil", "W22ZaJ0SNY7soEsUEjb6gQ==", "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0")
    first = server.step(b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO")
    assert first == b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
    final = server.step(
        b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
        b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
    )
    assert final == b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
    assert server.complete and server.username == "user"


def test_rfc5802_scram_sha1_vector() -> None:
    # the engine is hash-agnostic: RFC 5802's own SHA-1 example checks the algorithm
    server = _vector_server("sha1", "pencil", "QSXCR+Q6sek8bf92", "3rfcNHYJY1ZVvWVs7j")
    assert server.step(b"n,,n=user,r=fyko+d2lbbFgONRv9qkxdawL") == (
        b"r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096"
    )
    final = server.step(b"c=biws,r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,p=v0X8v3Bz2T0CJGbJQyF0X+HI4Ts=")
    assert final == b"v=rmF9pqV8S7suAoZWja4dJRkFsKQ="


def test_scram_wrong_proof_fails() -> None:
    server = _vector_server(
        "sha256", "not-pencil", "W22ZaJ0SNY7soEsUEjb6gQ==", "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
    )
    server.step(b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO")
    with pytest.raises(AuthenticationFailed, match="invalid credentials"):
        server.step(
            b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
            b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
        )
    assert not server.complete


@pytest.mark.parametrize(
    ("first", "reason"),
    [
        (b"n,,n=nobody,r=abc", "unknown user"),
        (b"p=tls-unique,,n=user,r=abc", "channel binding"),
        (b"n,a=admin,n=user,r=abc", "authorization id"),
        (b"n,,n=user,r=abc,tokenauth=true", "delegation tokens"),
        (b"n,,r=abc", "invalid SCRAM"),
        (b"garbage", "invalid SCRAM"),
        (b"\xff\xfe", "UTF-8"),
    ],
)
def test_scram_bad_client_first(first: bytes, reason: str) -> None:
    server = _vector_server("sha256", "pencil", "W22ZaJ0SNY7soEsUEjb6gQ==", "x")
    with pytest.raises(AuthenticationFailed, match=reason):
        server.step(first)


def test_scram_nonce_and_binding_must_match() -> None:
    server = _vector_server("sha256", "pencil", "W22ZaJ0SNY7soEsUEjb6gQ==", "S")
    server.step(b"n,,n=user,r=C")
    with pytest.raises(AuthenticationFailed, match="nonce"):
        server.step(b"c=biws,r=Cother,p=AAAA")
    with pytest.raises(AuthenticationFailed, match="finished"):
        server.step(b"c=biws,r=CS,p=AAAA")


def test_plain_users_from_jaas() -> None:
    users = PlainUsers.from_jaas(
        'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
        'password="admin-secret" user_admin="admin-secret" user_alice="a\\"lice";',
        "listener.name.sasl_plaintext.plain.sasl.jaas.config",
    )
    assert users.check("alice", 'a"lice') and users.check("admin", "admin-secret")
    assert not users.check("alice", "wrong") and not users.check("nobody", "x")
    assert "username" not in users  # the broker's own login is not a user


@pytest.mark.parametrize(
    "bad", ["PlainLoginModule required user_a=x", "PlainLoginModule always;", 'M required a="x;']
)
def test_bad_jaas_names_the_key(bad: str) -> None:
    with pytest.raises(ConfigError, match=r"the\.key"):
        parse_jaas(bad, "the.key")


@pytest.mark.parametrize(
    ("token", "reason"),
    [
        (b"\0alice\0wrong", "wrong password"),
        (b"\0mallory\0secret", "unknown user"),
        (b"bob\0alice\0secret", "authorization id"),
        (b"alice\0secret", "invalid PLAIN"),
        (b"\0\0", "without a user"),
    ],
)
def test_plain_refuses(token: bytes, reason: str) -> None:
    server = PlainServer(PlainUsers({"alice": "secret"}))
    with pytest.raises(AuthenticationFailed, match=reason):
        server.step(token)
    assert not server.complete and server.username is None


def test_plain_accepts_and_authzid_may_repeat_the_user() -> None:
    server = PlainServer(PlainUsers({"alice": "secret"}))
    assert server.step(b"alice\0alice\0secret") == b"" and server.username == "alice"


def test_credential_store_persists_no_password(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "scram-credentials.json"
    store = CredentialStore(path)
    salt = b"s" * 16
    from hmb.security.scram import salted_password

    store.upsert("alice", "SCRAM-SHA-512", salted_password("sha512", "pw-alice", salt, 8192), salt, 8192)
    assert "pw-alice" not in path.read_text()
    again = CredentialStore(path)
    credential = again.get("alice", "SCRAM-SHA-512")
    assert credential is not None and credential.iterations == 8192
    assert credential == credential_from_password("sha512", "pw-alice", 8192, salt)
    assert again.delete("alice", "SCRAM-SHA-512") and not again.delete("alice", "SCRAM-SHA-512")
    assert CredentialStore(path).users() == {}
    assert CredentialStore.check_iterations("SCRAM-SHA-256", 100) is not None
