"""The vocabulary of the property table: value kinds, the ``Property`` record, and
how Kafka-named ``key=value`` strings become typed, checked values.

Rules: a kind turns text into a value or says what it expected; a ``Property``
is one value of the broker (its Kafka name first, then synonyms of lower
precedence, each with the factor that converts its unit); every check a single
value needs (range, choices) is declared on the property, so a bad value is
reported with the key the user wrote and what that key expects.  Nothing here
imports the rest of hmb: the broker's and the log's configuration types are
both built from it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

NEVER = 2**63 - 1  # Kafka's Long.MAX_VALUE: "no limit" for flush settings

NOT_ACTED_ON = "Only the default is acted on so far (another value is accepted, with a warning)."

_INT_RANGE = (-(2**31), 2**31 - 1)  # Kafka's "int" settings are Java ints
_LONG_RANGE = (-(2**63), 2**63 - 1)


class ConfigError(ValueError):
    """A setting with a value that cannot be used; the message says which and why."""


class BadValueError(ValueError):
    """Raised by a kind's parser when it can say more than "expected <kind>"."""


# ---------------------------------------------------------------------------- listeners

SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
"""Kafka's security protocols: a listener's name maps to one of these."""

_LISTENER_NAME = re.compile(r"[A-Za-z0-9_]+")


HOUR_MS = 3_600_000  # the unit of settings named *.hours
WEEK_MS = 168 * HOUR_MS


@dataclass(frozen=True)
class Listener:
    """One endpoint: ``name://host:port`` (Kafka's listener names are upper case)."""

    host: str
    port: int
    name: str = "PLAINTEXT"

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.name}://{self.host}:{self.port}"


def _one_listener(text: str) -> Listener:
    name = "PLAINTEXT"
    if "://" in text:
        name, _, text = text.partition("://")
        if not _LISTENER_NAME.fullmatch(name):
            raise BadValueError(f"{name!r} is not a listener name (letters, digits and _)")
        name = name.upper()
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit():
        raise BadValueError(f"expected host:port or NAME://host:port, got {text!r}")
    if int(port) > 65535:
        raise BadValueError(f"port {port} is not in 0-65535")
    return Listener(host.strip("[]") or "0.0.0.0", int(port), name)


def _listeners(value: str) -> tuple[Listener, ...]:
    """``NAME://host:port`` entries, comma-separated; a bare ``host:port`` is PLAINTEXT."""
    found = tuple(_one_listener(item.strip()) for item in value.split(",") if item.strip())
    names = [listener.name for listener in found]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise BadValueError(f"each listener needs its own name; {', '.join(twice)} is used twice")
    return found


def _protocol_map(value: str) -> tuple[tuple[str, str], ...]:
    """``NAME:PROTOCOL`` pairs, as ``listener.security.protocol.map`` has them."""
    pairs = []
    for item in _items(value):
        name, sep, protocol = item.partition(":")
        name, protocol = name.strip().upper(), protocol.strip().upper()
        if not sep or not _LISTENER_NAME.fullmatch(name):
            raise BadValueError(f"expected NAME:PROTOCOL, got {item!r}")
        if protocol not in SECURITY_PROTOCOLS:
            raise BadValueError(f"{name} maps to {protocol!r}, not one of {', '.join(SECURITY_PROTOCOLS)}")
        pairs.append((name, protocol))
    return tuple(pairs)


def parse_listener(value: str, name: str) -> Listener:
    """``NAME://host:port`` (Kafka), or plain ``host:port``; the first of a comma list.

    ``name`` is what the message of a :class:`ConfigError` names (a key or a flag).
    """
    try:
        found = _listeners(value)
    except BadValueError as exc:
        raise ConfigError(f"{name}: {exc}") from None
    if not found:
        raise ConfigError(f"{name}: expected host:port or NAME://host:port, got {value!r}")
    return found[0]


# ---------------------------------------------------------------------------- kinds


@dataclass(frozen=True)
class Kind:
    """How one type of setting is read: ``parse`` raises ValueError on text it cannot use."""

    name: str  # the type as Kafka's documentation calls it: int, long, boolean, string, list ...
    expect: str  # completes "KEY must be ...": "an integer", "true or false"
    parse: Callable[[str], Any]


def _integer(low: int, high: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        value = int(text.strip())
        if not low <= value <= high:
            raise BadValueError(f"{value} is out of range ({low} to {high})")
        return value

    return parse


def _boolean(text: str) -> bool:
    value = text.strip().lower()
    if value not in ("true", "false"):
        raise ValueError(text)
    return value == "true"


def _items(text: str) -> tuple[str, ...]:
    return tuple(item.strip() for item in text.split(",") if item.strip())


def _paths(text: str) -> tuple[Path, ...]:
    paths = tuple(Path(item) for item in _items(text))
    if not paths:
        raise ValueError(text)
    return paths


def _ratio(text: str) -> float:
    value = float(text.strip())
    if not 0.0 <= value <= 1.0:
        raise BadValueError(f"{value} is out of range (0 to 1)")
    return value


def _positive_double(text: str) -> float:
    value = float(text.strip())
    if not value > 0.0:  # also refuses NaN
        raise BadValueError(f"{value} must be above 0")
    return value


INT = Kind("int", "an integer", _integer(*_INT_RANGE))
LONG = Kind("long", "an integer", _integer(*_LONG_RANGE))
BOOLEAN = Kind("boolean", "true or false", _boolean)
STRING = Kind("string", "a string", str.strip)
LIST = Kind("list", "a comma-separated list", _items)
RATIO = Kind("double", "a number from 0 to 1", _ratio)
POSITIVE_DOUBLE = Kind("double", "a number above 0", _positive_double)
DIRECTORIES = Kind("list", "a comma-separated list of directories", _paths)
LISTENERS = Kind("list", "a list of NAME://host:port", _listeners)
LISTENER = Kind("listener", "host:port", _one_listener)  # one address (control.listener)
PROTOCOL_MAP = Kind("list", "a list of NAME:PROTOCOL", _protocol_map)


# ---------------------------------------------------------------------------- properties


@dataclass(frozen=True)
class Synonym:
    """Another name for a property, read when the names before it are absent.

    ``scale`` converts its unit to the property's (``log.retention.hours``: 3600000).
    """

    name: str
    scale: int = 1


@dataclass(frozen=True)
class Property:
    """One broker setting: everything parsing, checking, help and docs need to know."""

    name: str  # Kafka's broker property name; it wins over the synonyms
    kind: Kind
    default: Any  # the typed default: Kafka's, unless ``kafka_default`` says otherwise
    doc: str  # one or two sentences in the project's words; the first is the --help line
    section: str  # the heading it is listed under in --help and the README
    attr: str  # the attribute on BrokerConfig, or on TopicConfig when ``topic`` is set
    topic: str | None = None  # Kafka's topic-level name, for settings a topic can override
    synonyms: tuple[Synonym, ...] = ()  # lower precedence names, in order
    at_least: int | None = None
    choices: tuple[str, ...] = ()  # allowed strings (each item, for a list)
    negative: int | None = None  # what any negative number means (-1: no limit, NEVER)
    unit: str = ""  # "ms" or "bytes": the help spells the default out ("1 GiB", "7 days")
    shown_default: str | None = None  # the default in words, where its value says little
    kafka_default: str | None = None  # Kafka's default, when hmb deliberately differs
    acted_on: bool = True  # False: accepted and checked, but only the default's behaviour exists

    @property
    def full_doc(self) -> str:
        """``doc``, and for a setting not acted on yet, that only the default is."""
        return self.doc if self.acted_on else f"{self.doc} {NOT_ACTED_ON}"

    @property
    def names(self) -> tuple[str, ...]:
        """Every broker-level name, highest precedence first."""
        return (self.name, *(s.name for s in self.synonyms))

    def parse(self, key: str, text: str) -> Any:
        """The typed value of ``key=text`` (``key`` is this property's name, a synonym
        or its topic-level name); ConfigError names ``key`` and says what it expects."""
        scale = next((s.scale for s in self.synonyms if s.name == key), 1)
        try:
            value = self.kind.parse(text)
        except BadValueError as exc:
            raise ConfigError(f"{key}: {exc}") from None
        except ValueError:
            raise ConfigError(f"{key} must be {self.kind.expect}, got {text!r}") from None
        if isinstance(value, int) and not isinstance(value, bool):
            if value < 0 and self.negative is not None:
                return self.negative
            if self.at_least is not None and value < self.at_least:  # in the unit of ``key``
                raise ConfigError(f"{key} must be at least {self.at_least}, got {text!r}")
            return value * scale
        for item in value if isinstance(value, tuple) else (value,):
            if self.choices and item not in self.choices:
                raise ConfigError(f"{key} must be {' or '.join(self.choices)}, got {text!r}")
        return value


def as_text(value: Any) -> str:
    """A typed value as server.properties would spell it."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, Listener):
        return value.url
    if isinstance(value, tuple):
        return ",".join(":".join(item) if isinstance(item, tuple) else as_text(item) for item in value)
    return str(value)


def known_names(properties: Iterable[Property]) -> frozenset[str]:
    return frozenset(name for p in properties for name in p.names)


def resolve(props: Mapping[str, str], properties: Iterable[Property]) -> dict[Property, Any]:
    """The value of each property ``props`` sets, Kafka's precedence among synonyms applied.

    Every name present is checked, not only the one that wins, so a typo in a
    shadowed synonym is still reported (Kafka checks each key on its own too).
    """
    out: dict[Property, Any] = {}
    for prop in properties:
        values = [prop.parse(name, props[name]) for name in prop.names if name in props]
        if values:
            out[prop] = values[0]
    return out


def resolve_topic(overrides: Mapping[str, str], properties: Iterable[Property]) -> dict[Property, Any]:
    """The value of each topic-level setting in ``overrides`` (``retention.ms``, ...).

    Unlike a server.properties file, a topic's settings are all checked: Kafka
    refuses a topic config it does not know rather than ignoring it.
    """
    by_topic_name = {p.topic: p for p in properties if p.topic is not None}
    unknown = sorted(set(overrides) - set(by_topic_name))
    if unknown:
        raise ConfigError(f"Unknown topic config name: {', '.join(unknown)}")
    return {by_topic_name[key]: by_topic_name[key].parse(key, text) for key, text in overrides.items()}
