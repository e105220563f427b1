"""SASL PLAIN (RFC 4616) and the users it checks, from Kafka's JAAS-style setting.

Rules:

* The users of a listener come from
  ``listener.name.<listener>.plain.sasl.jaas.config``, as Kafka's
  ``PlainLoginModule required user_alice="secret" ...;`` (``username`` and
  ``password`` there are the broker's own client login and name no user).
* The passwords are kept only as salted PBKDF2 hashes once read.
* The token is ``authzid NUL authcid NUL password``; an authzid other than
  the user itself is refused, as Kafka does.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass

from hmb.properties import ConfigError
from hmb.security.errors import AuthenticationFailed

_ITERATIONS = 4096
_OPTION = re.compile(r'\s*([A-Za-z0-9_.\-]+)\s*=\s*(?:"((?:\\.|[^"\\])*)"|([^\s;"]+))')


def parse_jaas(text: str, key: str = "sasl.jaas.config") -> tuple[str, dict[str, str]]:
    """``LoginModule flag name="value" ...;`` as (module, options); ConfigError names ``key``."""
    text = text.strip()
    if not text.endswith(";"):
        raise ConfigError(f"{key}: a JAAS entry ends with ';'")
    head = text[:-1].split(None, 2)
    if len(head) < 2 or head[1] not in ("required", "requisite", "sufficient", "optional"):
        raise ConfigError(f"{key}: expected 'LoginModule required option=\"value\" ...;'")
    options: dict[str, str] = {}
    rest = head[2] if len(head) > 2 else ""
    position = 0
    while rest[position:].strip():
        match = _OPTION.match(rest, position)
        if match is None:
            raise ConfigError(f"{key}: cannot read {rest[position:]!r}")
        value = match.group(2) if match.group(2) is not None else match.group(3)
        options[match.group(1)] = re.sub(r"\\(.)", r"\1", value)
        position = match.end()
    return head[0], options


@dataclass(frozen=True)
class _Hashed:
    """A PLAIN password as kept in memory: salted and hashed, compared in constant time."""

    salt: bytes
    digest: bytes


class PlainUsers:
    """PLAIN's user table: name -> salted hash of the password."""

    def __init__(self, passwords: dict[str, str] | None = None) -> None:
        self._users: dict[str, _Hashed] = {}
        for name, password in (passwords or {}).items():
            salt = secrets.token_bytes(16)
            self._users[name] = _Hashed(salt, self._hash(password, salt))

    @staticmethod
    def _hash(password: str, salt: bytes) -> bytes:
        return hashlib.pbkdf2_hmac("sha256", password.encode(), salt, _ITERATIONS)

    @classmethod
    def from_jaas(cls, text: str, key: str) -> PlainUsers:
        _, options = parse_jaas(text, key)
        return cls({name[5:]: value for name, value in options.items() if name.startswith("user_")})

    def __contains__(self, name: str) -> bool:
        return name in self._users

    def check(self, name: str, password: str) -> bool:
        hashed = self._users.get(name)
        if hashed is None:
            self._hash(password, b"0" * 16)  # the same work for an unknown user
            return False
        return hmac.compare_digest(self._hash(password, hashed.salt), hashed.digest)


class PlainServer:
    """The server side of one PLAIN exchange (one step)."""

    def __init__(self, users: PlainUsers) -> None:
        self.users = users
        self.username: str | None = None
        self.complete = False

    def step(self, token: bytes) -> bytes:
        if self.complete:
            raise AuthenticationFailed("PLAIN exchange already finished")
        parts = token.split(b"\0")
        if len(parts) != 3:
            raise AuthenticationFailed("invalid PLAIN token: expected authzid NUL user NUL password")
        try:
            authzid, name, password = (p.decode() for p in parts)
        except UnicodeDecodeError:
            raise AuthenticationFailed("PLAIN token is not UTF-8") from None
        if not name or not password:
            raise AuthenticationFailed("PLAIN token without a user name or password")
        if authzid and authzid != name:
            raise AuthenticationFailed(f"authorization id {authzid!r} is not the user {name!r}")
        if not self.users.check(name, password):
            known = "wrong password" if name in self.users else "unknown user"
            raise AuthenticationFailed(f"invalid credentials for {name!r} ({known})")
        self.username = name
        self.complete = True
        return b""
