"""kafka-python 3's JSON-driven codec (``kafka.protocol`` outside ``.old``)
as an independent peer for golden vectors.

kafka-python builds its message classes from Apache's JSON message specs,
so its names sometimes differ from kproto's (it shortens a few); values are
therefore matched by *position*: both sides keep the spec's field order.
Where the two sides represent a value differently, the converters here
translate: UUIDs (``uuid.UUID`` there, None for the zero UUID, 16 bytes
here), authorized-operations fields (a set of bit numbers there, None for
Kafka's "not requested" -2**31; Kafka's int32 here), tagged fields
(attributes there, a ``tagged_fields`` dict here), and an absent tagged
struct (None there, the struct of its defaults here, as Kafka decodes it).
"""

from __future__ import annotations

import importlib
import pkgutil
import uuid
from typing import Any

from kafka.protocol.api_message import ApiMessage
from kafka.protocol.schemas.fields.codecs import BitField
from kproto_strategies import _default

from kproto import primitives as p
from kproto.schema import Array, Field, Message, Nested, Versions, default_of


def _compact(f: Field, version: int, flexible: bool) -> bool:
    return flexible if f.flexible is None else version in Versions.parse(f.flexible)


def _classes() -> dict[tuple[int, str], Any]:
    """(api key, "request" | "response") -> kafka-python's message class."""
    import kafka.protocol

    for pkg in ("admin", "consumer", "metadata", "producer"):
        module = importlib.import_module(f"{kafka.protocol.__name__}.{pkg}")
        for info in pkgutil.iter_modules(module.__path__):
            importlib.import_module(f"{module.__name__}.{info.name}")
    importlib.import_module("kafka.protocol.sasl")

    out: dict[tuple[int, str], Any] = {}
    todo = list(ApiMessage.__subclasses__())
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        if cls._class_version is None and getattr(cls, "_json", None):
            out[(cls.API_KEY, cls.type)] = cls
    return out


CLASSES = _classes()


def spec_versions(api_key: int, kind: str) -> tuple[int, int] | None:
    """The versions kafka-python's spec declares (its ``validVersions``)."""
    cls = CLASSES.get((api_key, kind))
    return None if cls is None else tuple(cls.valid_versions)


# --------------------------------------------------------------------------
# kproto dict -> kafka-python object
# --------------------------------------------------------------------------


def _kwargs(
    fields: tuple[Field, ...], theirs: Any, value: Any, version: int, flexible: bool
) -> dict[str, Any]:
    their_fields = list(theirs.fields.values())
    assert len(their_fields) == len(fields), (theirs.name, [f.name for f in fields])
    tags = value.get("tagged_fields") or {}
    out: dict[str, Any] = {}
    for f, t in zip(fields, their_fields, strict=True):
        if not f.present_in(version):
            continue
        compact = _compact(f, version, flexible)
        if f.tag is not None:
            if not flexible:
                continue
            v = tags.get(f.name, _default(default_of(f, version, compact)))
            if p._is_default(v, default_of(f, version, compact)):
                continue  # kafka-python writes a tagged struct whenever it is not None
        else:
            v = value[f.name]
        out[t.name] = _to_theirs(f.type, t, v, version, compact)
    return out


def _to_theirs(ftype: Any, theirs: Any, v: Any, version: int, flexible: bool) -> Any:
    if v is None:
        return None
    if isinstance(ftype, Nested):
        return theirs.data_class(version=version, **_kwargs(ftype.fields, theirs, v, version, flexible))
    if isinstance(ftype, Array):
        if isinstance(ftype.of, (list, tuple)):
            return [
                theirs.data_class(
                    version=version, **_kwargs(tuple(ftype.of), theirs, item, version, flexible)
                )
                for item in v
            ]
        return [_to_theirs(ftype.of, None, item, version, flexible) for item in v]
    if ftype is p.Uuid:
        return uuid.UUID(bytes=bytes(v))
    if _is_bitfield(theirs):
        return {bit for bit in range(32) if v & (1 << bit)}
    return v


def _is_bitfield(theirs: Any) -> bool:
    return getattr(theirs, "_type", None) is BitField


def to_theirs(msg: Message, version: int, body: Any) -> Any:
    cls = CLASSES[(msg.api_key, "request" if msg.name.endswith("Request") else "response")]
    return cls[version](**_kwargs(msg.fields, cls._struct, body, version, msg.is_flexible(version)))


# --------------------------------------------------------------------------
# kafka-python object -> kproto dict
# --------------------------------------------------------------------------


def _values(fields: tuple[Field, ...], theirs: Any, obj: Any, version: int, flexible: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    tagged: dict[Any, Any] = {}
    for f, t in zip(fields, theirs.fields.values(), strict=True):
        if not f.present_in(version):
            continue
        compact = _compact(f, version, flexible)
        v = getattr(obj, t.name)
        if f.tag is not None:
            if not flexible:
                continue
            if v is None and not f.nullable_in(version):
                tagged[f.name] = _default(default_of(f, version, compact))
            else:
                tagged[f.name] = _from_theirs(f.type, t, v, version, compact)
        else:
            out[f.name] = _from_theirs(f.type, t, v, version, compact)
    if flexible:
        for key, raw in (obj.unknown_tags or {}).items():
            tagged[int(key.lstrip("_"))] = bytes(raw)
        out["tagged_fields"] = tagged
    return out


def _from_theirs(ftype: Any, theirs: Any, v: Any, version: int, flexible: bool) -> Any:
    if _is_bitfield(theirs):
        bits = sum(1 << bit for bit in (v if v is not None else {31}))
        return bits - (1 << 32) if bits >= 1 << 31 else bits
    if ftype is p.Uuid and v is None:
        return bytes(16)
    if v is None:
        return None
    if isinstance(ftype, Nested):
        return _values(ftype.fields, theirs, v, version, flexible)
    if isinstance(ftype, Array):
        if isinstance(ftype.of, (list, tuple)):
            return [_values(tuple(ftype.of), theirs, item, version, flexible) for item in v]
        return [_from_theirs(ftype.of, None, item, version, flexible) for item in v]
    if ftype is p.Uuid:
        return v.bytes if isinstance(v, uuid.UUID) else bytes(v)
    if isinstance(v, (bytearray, memoryview)):
        return bytes(v)
    return v


def from_theirs(msg: Message, version: int, obj: Any) -> dict[str, Any]:
    cls = CLASSES[(msg.api_key, "request" if msg.name.endswith("Request") else "response")]
    return _values(msg.fields, cls._struct, obj, version, msg.is_flexible(version))


def decode_theirs(msg: Message, version: int, frame: bytes) -> Any:
    """kafka-python's decoding of a whole frame (size, header, body).

    Its ApiVersions response class decodes any answer with an error as v0
    (what a broker that does not know the version sends); the generic path
    is used here so that every version is compared as declared.
    """
    cls = CLASSES[(msg.api_key, "request" if msg.name.endswith("Request") else "response")]
    return ApiMessage.decode.__func__(cls, frame, version=version, header=True, framed=True)
