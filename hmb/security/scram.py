"""SCRAM (RFC 5802, with SHA-256 and SHA-512 as RFC 7677): credentials and the server side.

Rules:

* A credential is what Kafka stores: salt, iteration count, StoredKey and
  ServerKey, never the password.  ``credential_from_password`` derives one;
  ``credential_from_salted`` derives one from the salted password an
  AlterUserScramCredentials request carries (the client did the hashing).
* The password is hashed as its UTF-8 bytes (Kafka does no SASLprep).
* :class:`ScramServer` is one exchange: ``step`` takes the client-first
  message and answers server-first, then takes client-final and answers
  server-final.  Channel binding is refused (Kafka has none); a user name
  in SCRAM's escaping (``=2C``, ``=3D``) is unescaped; an authorisation id
  other than the user itself is refused; extensions other than Kafka's are
  ignored, and ``tokenauth`` (delegation tokens, which hmb has not) is refused.
* The client-final nonce must end with the server's nonce, as Kafka checks
  it (old librdkafka sends its own nonce twice); the proof covers the
  message as sent, so this loosens nothing an attacker could use.
* Any failure raises :class:`AuthenticationFailed` with the reason for the
  log; the client only learns that authentication failed.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Callable
from dataclasses import dataclass

from hmb.security.errors import AuthenticationFailed

HASHES = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}
"""The SCRAM mechanisms hmb serves and the hash of each."""

MIN_ITERATIONS = 4096  # Kafka's bounds for SCRAM-SHA-256/512
MAX_ITERATIONS = 16384


@dataclass(frozen=True)
class ScramCredential:
    """A user's SCRAM secret as the server keeps it (RFC 5802): never the password itself."""

    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int


def _hmac(hash_name: str, key: bytes, data: bytes) -> bytes:
    return hmac.new(key, data, hash_name).digest()


def salted_password(hash_name: str, password: str, salt: bytes, iterations: int) -> bytes:
    """RFC 5802's Hi(): PBKDF2 with HMAC over the password's UTF-8 bytes."""
    return hashlib.pbkdf2_hmac(hash_name, password.encode(), salt, iterations)


def credential_from_salted(hash_name: str, salted: bytes, salt: bytes, iterations: int) -> ScramCredential:
    client_key = _hmac(hash_name, salted, b"Client Key")
    stored_key = hashlib.new(hash_name, client_key).digest()
    server_key = _hmac(hash_name, salted, b"Server Key")
    return ScramCredential(salt, stored_key, server_key, iterations)


def credential_from_password(
    hash_name: str, password: str, iterations: int = MIN_ITERATIONS, salt: bytes | None = None
) -> ScramCredential:
    salt = secrets.token_bytes(32) if salt is None else salt
    return credential_from_salted(
        hash_name, salted_password(hash_name, password, salt, iterations), salt, iterations
    )


def _unescape_name(name: str) -> str:
    if "=" in name.replace("=2C", "").replace("=3D", ""):
        raise AuthenticationFailed(f"invalid SCRAM user name {name!r}")
    return name.replace("=2C", ",").replace("=3D", "=")


def _attributes(message: str) -> list[tuple[str, str]]:
    """``k=v,k=v`` in order (an attribute is one letter; Kafka's extensions are longer)."""
    out = []
    for part in message.split(","):
        key, sep, value = part.partition("=")
        if not sep or not key:
            raise AuthenticationFailed(f"invalid SCRAM attribute {part!r}")
        out.append((key, value))
    return out


def _nonce() -> str:
    return base64.b64encode(secrets.token_bytes(24)).decode().replace(",", "_")


class ScramServer:
    """The server side of one SCRAM exchange (two steps)."""

    def __init__(
        self,
        hash_name: str,
        lookup: Callable[[str], ScramCredential | None],
        nonce: Callable[[], str] = _nonce,
    ) -> None:
        self.hash_name = hash_name
        self.lookup = lookup
        self.nonce = nonce
        self.username: str | None = None
        self.complete = False
        self._state = "first"
        self._gs2 = ""
        self._client_first_bare = ""
        self._server_first = ""
        self._nonce = ""
        self._credential: ScramCredential | None = None

    def step(self, token: bytes) -> bytes:
        try:
            message = token.decode()
        except UnicodeDecodeError:
            raise AuthenticationFailed("SCRAM message is not UTF-8") from None
        if self._state == "first":
            return self._first(message)
        if self._state == "final":
            return self._final(message)
        raise AuthenticationFailed("SCRAM exchange already finished")

    def _first(self, message: str) -> bytes:
        flag, sep1, rest = message.partition(",")
        authzid, sep2, bare = rest.partition(",")
        if not (sep1 and sep2):
            raise AuthenticationFailed("invalid SCRAM client-first message")
        if flag not in ("n", "y"):
            raise AuthenticationFailed("SCRAM channel binding is not supported")
        attributes = _attributes(bare)
        if len(attributes) < 2 or attributes[0][0] != "n" or attributes[1][0] != "r" or not attributes[1][1]:
            raise AuthenticationFailed("invalid SCRAM client-first message")
        if any(key == "tokenauth" and value.lower() == "true" for key, value in attributes[2:]):
            raise AuthenticationFailed("delegation tokens are not supported")
        username = _unescape_name(attributes[0][1])
        if authzid:
            if not authzid.startswith("a=") or _unescape_name(authzid[2:]) != username:
                raise AuthenticationFailed(f"authorization id {authzid[2:]!r} is not the user {username!r}")
        credential = self.lookup(username)
        if credential is None:
            raise AuthenticationFailed(f"unknown user {username!r}")
        self.username = username
        self._credential = credential
        self._gs2 = f"{flag},{authzid},"
        self._client_first_bare = bare
        self._nonce = attributes[1][1] + self.nonce()
        salt = base64.b64encode(credential.salt).decode()
        self._server_first = f"r={self._nonce},s={salt},i={credential.iterations}"
        self._state = "final"
        return self._server_first.encode()

    def _final(self, message: str) -> bytes:
        self._state = "done"
        without_proof, sep, proof_part = message.rpartition(",p=")
        if not sep:
            raise AuthenticationFailed("SCRAM client-final message has no proof")
        attributes = dict(_attributes(without_proof))
        if attributes.get("c") != base64.b64encode(self._gs2.encode()).decode():
            raise AuthenticationFailed("SCRAM channel binding does not match")
        # Kafka accepts a final nonce that *ends* with the server's: librdkafka before 1.9
        # (kcat on Debian 12) repeats its own nonce in front of it.
        if not attributes.get("r", "").endswith(self._nonce):
            raise AuthenticationFailed("SCRAM nonce does not match")
        try:
            proof = base64.b64decode(proof_part, validate=True)
        except ValueError:
            raise AuthenticationFailed("SCRAM proof is not base64") from None
        credential = self._credential
        assert credential is not None
        auth_message = f"{self._client_first_bare},{self._server_first},{without_proof}".encode()
        signature = _hmac(self.hash_name, credential.stored_key, auth_message)
        if len(proof) != len(signature):
            raise AuthenticationFailed(f"invalid credentials for {self.username!r}")
        client_key = bytes(a ^ b for a, b in zip(proof, signature, strict=True))
        if not hmac.compare_digest(hashlib.new(self.hash_name, client_key).digest(), credential.stored_key):
            raise AuthenticationFailed(f"invalid credentials for {self.username!r}")
        self.complete = True
        server_signature = _hmac(self.hash_name, credential.server_key, auth_message)
        return b"v=" + base64.b64encode(server_signature)
