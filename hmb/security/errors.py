"""The one exception of authentication: the reason is for the broker's log."""

from __future__ import annotations


class AuthenticationFailed(Exception):  # noqa: N818 - an outcome, as Kafka's SaslAuthenticationException
    """The client did not prove who it is; the message says why (logged, not sent)."""
