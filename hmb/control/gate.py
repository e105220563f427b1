"""Who may use the control endpoint: anyone while the broker has no security, super users after.

Rules:

* A broker without security (no authoriser, no SASL listener) is a test
  broker on loopback: its control endpoint answers every request, as it
  always did.
* Once the broker has security, a control connection must first log in with
  ``{"op": "login", "args": {"user": ..., "password": ...}}``: the password is
  checked against the broker's own users (a SASL listener's PLAIN users, or
  the stored SCRAM credentials, which keep only salted keys), and the user
  must be one of ``super.users``.  Until then every other request is refused
  and changes nothing.
* A failed login is answered after ``connection.failed.authentication.delay.ms``
  (password guessing stays slow), logged with the peer, and says nothing
  about whether the user exists.
"""

from __future__ import annotations

import hmac
import logging
from typing import TYPE_CHECKING

import trio

from hmb.security.authorizer import Authorizer
from hmb.security.scram import credential_from_password

if TYPE_CHECKING:
    from hmb.api.context import Services
    from hmb.config import BrokerConfig

log = logging.getLogger(__name__)

_SCRAM = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}


class Gate:
    def __init__(self, config: BrokerConfig, services: Services) -> None:
        self.config = config
        self.services = services
        self.super_users = frozenset(Authorizer.parse_super_users(config.super_users))

    @property
    def required(self) -> bool:
        """Whether the broker has security, so that the endpoint needs a login."""
        sasl = any(
            "SASL" in self.config.security_protocol(listener.name) for listener in self.config.listeners
        )
        return self.services.authorizer is not None or sasl

    def _password_ok(self, user: str, password: str) -> bool:
        for users in self.services.plain_users.values():
            if users.check(user, password):
                return True
        store = self.services.credentials
        if store is None:
            return False
        for mechanism, hash_name in _SCRAM.items():
            stored = store.get(user, mechanism)
            if stored is not None:
                given = credential_from_password(hash_name, password, stored.iterations, stored.salt)
                if hmac.compare_digest(given.stored_key, stored.stored_key):
                    return True
        return False

    async def login(self, user: object, password: object, peer: str) -> str | None:
        """None when ``user`` may use the endpoint, else the reason to give (after the delay)."""
        ok = (
            isinstance(user, str)
            and isinstance(password, str)
            and self._password_ok(user, password)
            and f"User:{user}" in self.super_users
        )
        if ok:
            log.info("control endpoint: %s logged in from %s", user, peer)
            return None
        log.warning("control endpoint: failed login for %r from %s", user, peer)
        await trio.sleep(self.config.failed_authentication_delay_ms / 1000)
        return "login failed: the control endpoint answers super users only (super.users)"
