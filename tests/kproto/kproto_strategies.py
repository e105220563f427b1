"""Hypothesis strategies derived from kproto's own declarations, and a
converter to kafka-python's positional form.

Generating values from the declarations means a new field or version is
covered by every round-trip, golden and fuzz test without touching them.
Flexible versions get a ``tagged_fields`` dict in every struct: each known
tagged field at its default or at a drawn value, sometimes unknown tags
(raw bytes, which kproto must carry through unchanged).
"""

from __future__ import annotations

import functools
import struct
from typing import Any

from construct import Construct, Struct
from hypothesis import settings
from hypothesis import strategies as st

from kproto import primitives as p
from kproto.registry import REQUESTS, RESPONSES
from kproto.schema import Array, Bytes, Field, Message, Records, String, Versions

_INTS = {
    id(p.Int8): (-(2**7), 2**7 - 1),
    id(p.Int16): (-(2**15), 2**15 - 1),
    id(p.Int32): (-(2**31), 2**31 - 1),
    id(p.Int64): (-(2**63), 2**63 - 1),
    id(p.UInt32): (0, 2**32 - 1),
    id(p.Varint): (-(2**31), 2**31 - 1),
    id(p.Varlong): (-(2**63), 2**63 - 1),
    id(p.UVarint): (0, 2**32 - 1),
}

# Unknown tags drawn for flexible structs: well above any tag Kafka declares.
UNKNOWN_TAGS = st.dictionaries(st.integers(100, 120), st.binary(max_size=6), max_size=2)


def _compact(f: Field, version: int, flexible: bool) -> bool:
    """Whether ``f`` is encoded compactly (and its nested structs are flexible)."""
    return flexible if f.flexible is None else version in Versions.parse(f.flexible)


def _default(value: Any) -> Any:
    """A tagged field's default as decoding hands it out (tuples become lists)."""
    return list(value) if isinstance(value, tuple) else value


def type_strategy(ftype: Any, version: int, nullable: bool, flexible: bool = False) -> st.SearchStrategy[Any]:
    if ftype is String:
        base: st.SearchStrategy[Any] = st.text(max_size=12)
    elif ftype is Bytes or ftype is Records:
        base = st.binary(max_size=40)
    elif isinstance(ftype, Array):
        if isinstance(ftype.of, (list, tuple)):
            elem = struct_strategy(ftype.of, version, flexible)
        else:
            elem = type_strategy(ftype.of, version, False, flexible)
        base = st.lists(elem, max_size=3)
    elif id(ftype) in _INTS:
        lo, hi = _INTS[id(ftype)]
        base = st.integers(lo, hi)
    elif ftype is p.Boolean:
        base = st.booleans()
    elif ftype is p.Uuid:
        base = st.binary(min_size=16, max_size=16)
    elif ftype is p.Float64:
        base = st.floats(allow_nan=False)
    else:
        raise TypeError(f"no strategy for {ftype!r}")
    return st.none() | base if nullable else base


def _field_strategy(f: Field, version: int, flexible: bool) -> st.SearchStrategy[Any]:
    return type_strategy(f.type, version, f.nullable_in(version), _compact(f, version, flexible))


def struct_strategy(
    fields: tuple[Field, ...] | list[Field], version: int, flexible: bool = False
) -> st.SearchStrategy[Any]:
    members: dict[str, st.SearchStrategy[Any]] = {
        f.name: _field_strategy(f, version, flexible)
        for f in fields
        if f.present_in(version) and f.tag is None
    }
    if flexible:
        known = st.fixed_dictionaries(
            {
                f.name: st.just(_default(f.default)) | _field_strategy(f, version, flexible)
                for f in fields
                if f.present_in(version) and f.tag is not None
            }
        )
        members["tagged_fields"] = st.builds(lambda k, u: {**k, **u}, known, UNKNOWN_TAGS)
    return st.fixed_dictionaries(members)


@functools.cache
def message_strategy(msg: Message, version: int) -> st.SearchStrategy[Any]:
    """Bodies of ``msg`` at ``version`` (built once: tests draw from it per example)."""
    return struct_strategy(msg.fields, version, msg.is_flexible(version))


def all_versions(table: dict[int, Message]) -> list[tuple[Message, int]]:
    return [(msg, v) for _, msg in sorted(table.items()) for v in range(msg.min_version, msg.max_version + 1)]


REQUEST_VERSIONS = all_versions(REQUESTS)
RESPONSE_VERSIONS = all_versions(RESPONSES)

# Settings for tests parametrized over every (message, version): close to a
# hundred versions per direction, so each gets a share of the profile's
# example budget (ci 150 -> 25, dev 100 -> 16, long 5000 -> 833) and the
# suite's runtime does not grow with every version declared.
PER_VERSION = settings(max_examples=max(10, settings.default.max_examples // 6))


def ids(pairs: list[tuple[Message, int]]) -> list[str]:
    return [f"{m.name}-v{v}" for m, v in pairs]


# --------------------------------------------------------------------------
# kafka-python's positional form, walking kproto's (interpreted) grammar
# --------------------------------------------------------------------------


def _members(con: Struct) -> list[tuple[str, Construct]]:
    return [(sc.name, sc.subcon) for sc in con.subcons]


def _struct_elements(con: Construct) -> Struct | None:
    """The element struct of an array of structs, else None."""
    if isinstance(con, p.KArray) and isinstance(con.subcon, Struct):
        return con.subcon
    return None


def _raw_tags(tags: p.TaggedFields, value: dict[Any, Any] | None) -> dict[int, bytes]:
    """kproto's tagged-field dict -> kafka-python's ``{tag: raw bytes}``, in tag order."""
    raw: dict[int, bytes] = {}
    for key, v in (value or {}).items():
        if isinstance(key, int):
            raw[key] = bytes(v)
            continue
        tag, con, default = tags.by_name[key]
        if v != _default(default):
            raw[tag] = bytes(con.build(v))
    return dict(sorted(raw.items()))


def _typed_tags(tags: p.TaggedFields, raw: dict[int, bytes]) -> dict[Any, Any]:
    """kafka-python's ``{tag: raw bytes}`` -> kproto's tagged-field dict."""
    out: dict[Any, Any] = {name: _default(default) for name, _, default in tags.known.values()}
    for tag, data in raw.items():
        if tag in tags.known:
            name, con, _ = tags.known[tag]
            out[name] = plain(con.parse(data))
        else:
            out[tag] = data
    return out


def to_positional(con: Struct, value: dict[str, Any]) -> tuple[Any, ...]:
    """kproto's dict form -> kafka-python's positional tuples (same field order).

    ``con`` is the version's interpreted grammar (``Message.plain_struct``).
    kafka-python declares an array of one-field structs as an array of that
    field (same bytes), so such elements are flattened; tagged fields become
    its raw ``{tag: bytes}`` dict.
    """
    out = []
    for name, sub in _members(con):
        v = value.get(name)
        if isinstance(sub, p.TaggedFields):
            v = _raw_tags(sub, v)
        elif (elements := _struct_elements(sub)) is not None and v is not None:
            inner = _members(elements)
            if len(inner) == 1:
                v = [item[inner[0][0]] for item in v]
            else:
                v = [to_positional(elements, item) for item in v]
        out.append(v)
    return tuple(out)


def from_positional(con: Struct, value: Any) -> dict[str, Any]:
    """kafka-python's decoded Struct (or tuple) -> kproto's dict form."""
    if hasattr(value, "SCHEMA"):
        value = [getattr(value, name) for name in value.SCHEMA.names]
    members = _members(con)
    if members and isinstance(members[-1][1], p.TaggedFields) and len(value) == len(members) - 1:
        value = [*value, {}]  # kafka-python drops an empty tag section when it decodes a tuple
    out = {}
    for (name, sub), v in zip(members, value, strict=True):
        if isinstance(sub, p.TaggedFields):
            v = _typed_tags(sub, v)
        elif (elements := _struct_elements(sub)) is not None and v is not None:
            inner = _members(elements)
            if len(inner) == 1:
                v = [{inner[0][0]: item} for item in v]
            else:
                v = [from_positional(elements, item) for item in v]
        elif isinstance(sub, p.KArray) and v is not None:
            v = list(v)
        out[name] = v
    return out


def plain(value: Any) -> Any:
    """Containers/ListContainers -> dicts/lists without Construct's private keys, for comparisons."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items() if not (isinstance(k, str) and k.startswith("_"))}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def mutate(draw: st.DrawFn, buf: bytearray, max_ops: int = 3) -> None:
    """Damage ``buf`` in place: 1..max_ops flips, insertions, deletions or truncations."""
    for _ in range(draw(st.integers(min_value=1, max_value=max_ops))):
        op = draw(st.sampled_from(["flip", "insert", "delete", "truncate"]))
        pos = draw(st.integers(min_value=0, max_value=max(len(buf) - 1, 0)))
        if op == "flip" and buf:
            buf[pos] ^= draw(st.integers(min_value=1, max_value=255))
        elif op == "insert":
            buf[pos:pos] = draw(st.binary(min_size=1, max_size=8))
        elif op == "delete":
            del buf[pos : pos + draw(st.integers(min_value=1, max_value=8))]
        else:
            del buf[pos:]


def entry_boundaries(data: bytes) -> list[int]:
    """Start of every top-level entry of a record set (any magic), plus the end."""
    out = [0]
    pos = 0
    while pos < len(data):
        (size,) = struct.unpack_from(">i", data, pos + 8)
        pos += 12 + size
        out.append(pos)
    return out
