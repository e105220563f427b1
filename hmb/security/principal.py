"""Principals (``User:alice``) and how a TLS client certificate becomes one.

Rules, as Kafka's: a connection that did not authenticate is
``User:ANONYMOUS``; a SASL connection is ``User:<the authenticated name>``;
an SSL connection with a client certificate is ``User:<subject>``, the
subject written as RFC 2253 does (last RDN first, ``CN=alice,OU=eng,O=acme``)
and passed through ``ssl.principal.mapping.rules``: a comma-separated list
of ``RULE:pattern/replacement/`` (optionally ``L`` or ``U`` after the last
slash for lower or upper case) and ``DEFAULT``; the first rule whose pattern
matches the whole subject gives the name, ``DEFAULT`` gives the subject
itself.  No rule matching is an error: that connection is refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hmb.properties import ConfigError


@dataclass(frozen=True)
class KafkaPrincipal:
    """Who a connection is, as Kafka writes it: ``User:alice`` (what ACLs name)."""

    type: str
    name: str

    def __str__(self) -> str:
        return f"{self.type}:{self.name}"

    @classmethod
    def parse(cls, text: str) -> KafkaPrincipal:
        """``User:alice`` (the type is everything before the first colon)."""
        kind, sep, name = text.partition(":")
        if not sep or not kind or not name:
            raise ValueError(f"a principal is TYPE:NAME, got {text!r}")
        return cls(kind, name)


ANONYMOUS = KafkaPrincipal("User", "ANONYMOUS")


def user(name: str) -> KafkaPrincipal:
    return KafkaPrincipal("User", name)


# ------------------------------------------------------------------ certificate subjects

# Keywords RFC 2253 (and Java's X500Principal) write by name; others go by OID.
_KEYWORDS = {
    "commonName": "CN",
    "countryName": "C",
    "localityName": "L",
    "stateOrProvinceName": "ST",
    "organizationName": "O",
    "organizationalUnitName": "OU",
    "streetAddress": "STREET",
    "domainComponent": "DC",
    "userId": "UID",
}


def _escape(value: str) -> str:
    out = re.sub(r'([,+"\\<>;=])', r"\\\1", value)
    if out.startswith(("#", " ")):
        out = "\\" + out
    if out.endswith(" ") and not out.endswith("\\ "):
        out = out[:-1] + "\\ "
    return out


def subject_name(subject: tuple[tuple[tuple[str, str], ...], ...]) -> str:
    """An ``ssl`` module subject (RDNs in certificate order) as an RFC 2253 string."""
    rdns = []
    for rdn in reversed(subject):
        rdns.append("+".join(f"{_KEYWORDS.get(key, key)}={_escape(value)}" for key, value in rdn))
    return ",".join(rdns)


# ------------------------------------------------------------------ mapping rules

_RULE = re.compile(r"\s*(?:(DEFAULT)|RULE:((?:\\.|[^\\/])*)/((?:\\.|[^\\/])*)/([LU]?))\s*(?:,|$)")


@dataclass(frozen=True)
class _Rule:
    """One ``ssl.principal.mapping.rules`` entry: ``RULE:pattern/replacement/[LU]`` or DEFAULT."""

    pattern: re.Pattern[str] | None  # None: DEFAULT
    replacement: str = ""
    case: str = ""

    def apply(self, subject: str) -> str | None:
        if self.pattern is None:
            return subject
        match = self.pattern.fullmatch(subject)
        if match is None:
            return None
        name = match.expand(self.replacement)
        return name.lower() if self.case == "L" else name.upper() if self.case == "U" else name


class PrincipalMapper:
    """``ssl.principal.mapping.rules``, parsed once; ``name_of`` maps one subject."""

    def __init__(self, rules: str) -> None:
        self.rules: list[_Rule] = []
        position, text = 0, rules.strip()
        while position < len(text):
            match = _RULE.match(text, position)
            if match is None or match.end() == position:
                raise ConfigError(f"ssl.principal.mapping.rules: cannot read {text[position:]!r}")
            position = match.end()
            if match.group(1):
                self.rules.append(_Rule(None))
                continue
            # Java's $1 group references become Python's \g<1>
            replacement = re.sub(r"\$(\d+)", r"\\g<\1>", match.group(3).replace("\\/", "/"))
            try:
                pattern = re.compile(match.group(2).replace("\\/", "/"))
            except re.error as exc:
                raise ConfigError(
                    f"ssl.principal.mapping.rules: bad pattern {match.group(2)!r}: {exc}"
                ) from None
            self.rules.append(_Rule(pattern, replacement, match.group(4)))
        if not self.rules:
            self.rules.append(_Rule(None))

    def name_of(self, subject: str) -> str:
        """The user name for ``subject``; ValueError when no rule matches it."""
        for rule in self.rules:
            name = rule.apply(subject)
            if name is not None:
                return name
        raise ValueError(f"no ssl.principal.mapping.rules rule matches {subject!r}")
