"""How the client secures its connections: TLS and SASL, with kafka-python's setting names.

``security_protocol`` is Kafka's: PLAINTEXT, SSL, SASL_PLAINTEXT or
SASL_SSL.  TLS takes ``ssl_context`` as given, else builds one from
``ssl_cafile`` (the CAs the broker's certificate must chain to; the
system's when absent), ``ssl_certfile``/``ssl_keyfile``/``ssl_password``
(a client certificate, for brokers with ``ssl.client.auth``) and
``ssl_check_hostname``.  SASL uses ``sasl_mechanism`` (PLAIN,
SCRAM-SHA-256, SCRAM-SHA-512) with ``sasl_plain_username`` and
``sasl_plain_password`` (kafka-python uses these names for every mechanism).
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass, fields
from typing import Any

from hmb_client.sasl import MECHANISMS

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")


@dataclass(frozen=True)
class SecuritySettings:
    security_protocol: str = "PLAINTEXT"
    ssl_context: ssl.SSLContext | None = None
    ssl_check_hostname: bool = True
    ssl_cafile: str | None = None
    ssl_certfile: str | None = None
    ssl_keyfile: str | None = None
    ssl_password: str | None = None
    sasl_mechanism: str = "PLAIN"
    sasl_plain_username: str | None = None
    sasl_plain_password: str | None = None

    def __post_init__(self) -> None:
        if self.security_protocol not in PROTOCOLS:
            raise ValueError(
                f"security_protocol must be one of {', '.join(PROTOCOLS)}, not {self.security_protocol!r}"
            )
        if self.sasl:
            if self.sasl_mechanism not in MECHANISMS:
                raise ValueError(
                    f"sasl_mechanism must be one of {', '.join(MECHANISMS)}, not {self.sasl_mechanism!r}"
                )
            if self.sasl_plain_username is None or self.sasl_plain_password is None:
                raise ValueError(
                    f"{self.security_protocol} needs sasl_plain_username and sasl_plain_password"
                )

    @property
    def tls(self) -> bool:
        return self.security_protocol in ("SSL", "SASL_SSL")

    @property
    def sasl(self) -> bool:
        return self.security_protocol.startswith("SASL_")

    def client_context(self) -> ssl.SSLContext:
        """The TLS context connections use (``ssl_context`` when given)."""
        if self.ssl_context is not None:
            return self.ssl_context
        context = ssl.create_default_context(cafile=self.ssl_cafile)
        context.check_hostname = self.ssl_check_hostname
        if self.ssl_certfile is not None:
            context.load_cert_chain(self.ssl_certfile, self.ssl_keyfile, self.ssl_password)
        return context


SECURITY_SETTINGS = tuple(f.name for f in fields(SecuritySettings))


def security_of(settings: Any) -> SecuritySettings:
    """The security part of any settings object with (some of) these attributes."""
    return SecuritySettings(
        **{name: getattr(settings, name) for name in SECURITY_SETTINGS if hasattr(settings, name)}
    )
