"""Declaring a Kafka message once, for all its versions.

Kafka's JSON message specs (``clients/src/main/resources/common/message`` in
apache/kafka) declare each request and response once, with every field
carrying the versions it exists in (``"versions": "3+"``), the versions in
which it may be null, and the versions from which the message is "flexible"
(compact strings/arrays and tagged fields).  This module is that idea in
Python: a :class:`Message` holds :class:`Field` declarations and derives one
compiled Construct ``Struct`` per version on demand.

Rules of this module:

* Field types are *markers* (``String``, ``Bytes``, ``Records``, ``Array(...)``,
  ``Nested(...)`` for a single struct, or a fixed-width Construct such as
  ``Int32``); the concrete Construct is chosen per version: nullable or not,
  compact or classic.  Every struct of a flexible version, nested ones
  included, ends with its tagged fields.
* A field's default is Kafka's: the declared one, else zero, false, the
  empty string, bytes or array, the all-zero UUID, or (for a struct) the
  struct of its fields' defaults.  Only tagged fields use it on the wire:
  one equal to its default is not written, and an absent one decodes to it.
* A version's struct contains only the fields that exist in that version, in
  declaration order, so one declaration can never drift from another copy.
* Building ignores keys a version does not have, so one dict can be encoded
  at any version (the broker fills the newest shape and the version picks).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from construct import Construct, Struct

from kproto import primitives as p
from kproto.primitives import KArray, KBytes, KString, NullableStruct, TaggedFields

__all__ = [
    "AUTO",
    "Array",
    "Bytes",
    "Field",
    "Message",
    "Nested",
    "Records",
    "String",
    "Versions",
    "default_of",
]


@dataclass(frozen=True)
class Versions:
    """An inclusive version range as Kafka writes it: ``"0+"``, ``"1-3"``, ``"2"``, ``"none"``."""

    low: int
    high: int | None  # None: open-ended

    _NONE_LOW = 1 << 30

    @classmethod
    def parse(cls, spec: str | Versions) -> Versions:
        if isinstance(spec, Versions):
            return spec
        spec = spec.strip()
        if spec == "none":
            return cls(cls._NONE_LOW, -1)
        m = re.fullmatch(r"(\d+)(\+|-(\d+))?", spec)
        if not m:
            raise ValueError(f"bad version range {spec!r}")
        low = int(m.group(1))
        if m.group(2) == "+":
            return cls(low, None)
        high = int(m.group(3)) if m.group(3) else low
        return cls(low, high)

    def __contains__(self, version: object) -> bool:
        if not isinstance(version, int):
            return False
        return self.low <= version and (self.high is None or version <= self.high)

    def __str__(self) -> str:
        if self.high is None:
            return f"{self.low}+"
        if self.high < self.low:
            return "none"
        return str(self.low) if self.low == self.high else f"{self.low}-{self.high}"


class _Flavoured:
    """A type marker whose Construct depends on nullability and flexibility."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


String = _Flavoured("String")
Bytes = _Flavoured("Bytes")
Records = _Flavoured("Records")  # a record set, kept as raw bytes at this layer


@dataclass(frozen=True)
class Array:
    """An array of a type marker, a fixed-width Construct, or a nested struct."""

    of: Any  # _Flavoured | Construct | Sequence[Field]


@dataclass(frozen=True)
class Nested:
    """A single (non-array) struct field: Kafka's ``"type": "SomeStruct"``.

    Nullable in the versions its field says so: then a signed byte comes
    first, -1 for null and 1 for a struct.
    """

    fields: tuple[Field, ...]

    def __init__(self, fields: Sequence[Field]) -> None:
        object.__setattr__(self, "fields", tuple(fields))


class _Auto:
    """The default of a field that declares none: Kafka's zero value of its type."""

    def __repr__(self) -> str:
        return "AUTO"


AUTO: Any = _Auto()


@dataclass(frozen=True)
class Field:
    """One field of a message, as in Kafka's JSON specs.

    ``tag`` makes it a tagged field (flexible versions only); ``default`` is
    its value when absent, and a tagged field equal to its default is not
    written.
    """

    name: str
    type: Any
    versions: str = "0+"
    nullable: str = "none"
    tag: int | None = None
    default: Any = AUTO
    flexible: str | None = None  # Kafka's per-field "flexibleVersions" override
    about: str = ""
    _versions: Versions = field(init=False, repr=False, compare=False)
    _nullable: Versions = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_versions", Versions.parse(self.versions))
        object.__setattr__(self, "_nullable", Versions.parse(self.nullable))

    def present_in(self, version: int) -> bool:
        return version in self._versions

    def nullable_in(self, version: int) -> bool:
        return version in self._nullable


_ZERO: dict[int, Any] = {
    id(p.Boolean): False,
    id(p.Uuid): bytes(16),
    id(p.Float64): 0.0,
}


def default_of(f: Field, version: int, flexible: bool) -> Any:
    """``f``'s default at ``version`` (see the module rules).

    Arrays are tuples (immutable, shareable); a struct's default is a dict
    of its fields' defaults, with an empty ``tagged_fields`` when flexible.
    """
    if f.default is not AUTO:
        return f.default
    ftype = f.type
    if ftype is String:
        return ""
    if ftype is Bytes or ftype is Records:
        return b""
    if isinstance(ftype, Array):
        return ()
    if isinstance(ftype, Nested):
        return struct_default(ftype.fields, version, flexible)
    return _ZERO.get(id(ftype), 0)


def struct_default(fields: Sequence[Field], version: int, flexible: bool) -> dict[str, Any]:
    """A struct whose every field holds its default, as decoding would hand it out."""
    out: dict[str, Any] = {}
    tagged: dict[str, Any] = {}
    for f in fields:
        if not f.present_in(version):
            continue
        compact = flexible if f.flexible is None else version in Versions.parse(f.flexible)
        if f.tag is None:
            out[f.name] = default_of(f, version, compact)
        elif flexible:
            tagged[f.name] = default_of(f, version, compact)
    if flexible:
        out["tagged_fields"] = tagged
    return out


def _resolve(ftype: Any, version: int, flexible: bool, nullable: bool) -> Construct:
    """The Construct for a field type at ``version``."""
    if isinstance(ftype, Nested):
        con = _struct(ftype.fields, version, flexible)
        return NullableStruct(con) if nullable else con
    if ftype is String:
        return KString(nullable=nullable, compact=flexible)
    if ftype is Bytes or ftype is Records:
        return KBytes(nullable=nullable, compact=flexible)
    if isinstance(ftype, Array):
        of = ftype.of
        if isinstance(of, (list, tuple)):
            element = _struct(of, version, flexible)
        else:
            element = _resolve(of, version, flexible, False)
        return KArray(element, nullable=nullable, compact=flexible)
    if isinstance(ftype, Construct):
        return ftype
    raise TypeError(f"unknown field type {ftype!r}")


def _struct(fields: Sequence[Field], version: int, flexible: bool) -> Struct:
    members = []
    tagged: dict[int, tuple[str, Construct, Any]] = {}
    for f in fields:
        if not f.present_in(version):
            continue
        compact = flexible if f.flexible is None else version in Versions.parse(f.flexible)
        con = _resolve(f.type, version, compact, f.nullable_in(version))
        if f.tag is not None:
            if flexible:
                tagged[f.tag] = (f.name, con, default_of(f, version, compact))
            continue
        members.append(f.name / con)
    if flexible:
        members.append("tagged_fields" / TaggedFields(tagged))
    return Struct(*members)


class Message:
    """A request, response or header declared once for all its versions."""

    def __init__(
        self,
        name: str,
        *,
        api_key: int | None,
        valid: str,
        flexible: str = "none",
        fields: Sequence[Field],
    ) -> None:
        self.name = name
        self.api_key = api_key
        self.valid = Versions.parse(valid)
        self.flexible = Versions.parse(flexible)
        self.fields = tuple(fields)

    def __repr__(self) -> str:
        return f"<Message {self.name} v{self.valid}>"

    @property
    def min_version(self) -> int:
        return self.valid.low

    @property
    def max_version(self) -> int:
        assert self.valid.high is not None, "a message's valid range is closed"
        return self.valid.high

    def is_flexible(self, version: int) -> bool:
        return version in self.flexible

    def struct(self, version: int) -> Construct:
        """The compiled grammar of ``version`` (cached)."""
        return _compiled(self, version)

    def plain_struct(self, version: int) -> Construct:
        """The interpreted grammar of ``version``: slower, but its errors name the field."""
        return _plain(self, version)


@functools.cache
def _plain(message: Message, version: int) -> Construct:
    if version not in message.valid:
        raise ValueError(f"{message.name} has no version {version} (valid {message.valid})")
    return _struct(message.fields, version, message.is_flexible(version))


@functools.cache
def _compiled(message: Message, version: int) -> Construct:
    return _plain(message, version).compile()
