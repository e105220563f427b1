"""The client side of SASL PLAIN and SCRAM-SHA-256/512 (RFC 4616, 5802, 7677), sans-I/O.

A mechanism client gives the first token (``first()``), then answers each
server token (``answer(token)``) until the exchange is done; SCRAM checks the
server's signature, so a broker that does not know the password cannot pass
for one that does.  User names are escaped as SCRAM requires (``,`` and ``=``).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
_HASHES = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}


class SaslError(Exception):
    """The server's answer is not what the mechanism expects."""


class PlainClient:
    def __init__(self, username: str, password: str) -> None:
        self.username, self.password = username, password
        self.done = False

    def first(self) -> bytes:
        self.done = True
        return b"\0" + self.username.encode() + b"\0" + self.password.encode()

    def answer(self, token: bytes) -> bytes | None:
        return None


class ScramClient:
    def __init__(self, mechanism: str, username: str, password: str, nonce: str | None = None) -> None:
        self.hash = _HASHES[mechanism]
        self.username, self.password = username, password
        self.nonce = nonce or base64.b64encode(secrets.token_bytes(18)).decode()
        self.done = False
        self._bare = ""
        self._server_signature = b""

    def first(self) -> bytes:
        name = self.username.replace("=", "=3D").replace(",", "=2C")
        self._bare = f"n={name},r={self.nonce}"
        return ("n,," + self._bare).encode()

    def answer(self, token: bytes) -> bytes | None:
        if self._server_signature:
            self._verify(token)
            return None
        server_first = token.decode()
        attributes = dict(part.split("=", 1) for part in server_first.split(","))
        nonce, salt, iterations = attributes["r"], base64.b64decode(attributes["s"]), int(attributes["i"])
        if not nonce.startswith(self.nonce):
            raise SaslError("the server's nonce does not extend ours")
        salted = hashlib.pbkdf2_hmac(self.hash, self.password.encode(), salt, iterations)
        client_key = hmac.new(salted, b"Client Key", self.hash).digest()
        stored_key = hashlib.new(self.hash, client_key).digest()
        without_proof = f"c=biws,r={nonce}"
        auth_message = f"{self._bare},{server_first},{without_proof}".encode()
        signature = hmac.new(stored_key, auth_message, self.hash).digest()
        proof = bytes(a ^ b for a, b in zip(client_key, signature, strict=True))
        server_key = hmac.new(salted, b"Server Key", self.hash).digest()
        self._server_signature = hmac.new(server_key, auth_message, self.hash).digest()
        return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()

    def _verify(self, token: bytes) -> None:
        text = token.decode()
        if not text.startswith("v=") or not hmac.compare_digest(
            base64.b64decode(text[2:]), self._server_signature
        ):
            raise SaslError("the server's SCRAM signature is wrong")
        self.done = True


def client_for(mechanism: str, username: str, password: str) -> PlainClient | ScramClient:
    if mechanism == "PLAIN":
        return PlainClient(username, password)
    if mechanism in _HASHES:
        return ScramClient(mechanism, username, password)
    raise ValueError(f"unsupported SASL mechanism {mechanism!r}; hmb_client has {', '.join(MECHANISMS)}")


def scram_salted_password(mechanism: str, password: str, salt: bytes, iterations: int) -> bytes:
    """What AlterUserScramCredentials carries: the password hashed where it is typed."""
    return hashlib.pbkdf2_hmac(_HASHES[mechanism], password.encode(), salt, iterations)
