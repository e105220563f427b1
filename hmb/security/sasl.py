"""The SASL mechanisms hmb serves and how one exchange is started.

A mechanism server is sans-I/O: ``step(token) -> token`` until
``complete``, raising :class:`AuthenticationFailed` with the reason for the
log.  PLAIN checks the users of the connection's listener (its JAAS
setting); SCRAM checks the credential store.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from hmb.security.credentials import CredentialStore
from hmb.security.errors import AuthenticationFailed
from hmb.security.plain import PlainServer, PlainUsers
from hmb.security.scram import HASHES, ScramServer

SUPPORTED_MECHANISMS = ("PLAIN", *HASHES)

__all__ = ["SUPPORTED_MECHANISMS", "AuthenticationFailed", "MechanismServer", "start"]


class MechanismServer(Protocol):
    username: str | None
    complete: bool

    def step(self, token: bytes) -> bytes: ...


def start(
    mechanism: str, plain_users: Callable[[], PlainUsers], credentials: CredentialStore
) -> MechanismServer:
    """A fresh server for ``mechanism`` (one of SUPPORTED_MECHANISMS)."""
    if mechanism == "PLAIN":
        return PlainServer(plain_users())
    hash_name = HASHES[mechanism]
    return ScramServer(hash_name, lambda user: credentials.get(user, mechanism))
