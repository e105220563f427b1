"""Hypothesis strategies derived from kproto's own declarations.

Generating values from the declarations means a new field or version is
covered by every round-trip, golden and fuzz test without touching them.
Flexible versions get a ``tagged_fields`` dict in every struct: each known
tagged field at its default or at a drawn value, sometimes unknown tags
(raw bytes, which kproto must carry through unchanged).  Single structs
(``Nested``) are drawn like array elements, or null where nullable.
"""

from __future__ import annotations

import functools
import struct
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st

from kproto import primitives as p
from kproto.registry import REQUESTS, RESPONSES
from kproto.schema import Array, Bytes, Field, Message, Nested, Records, String, Versions, default_of

_INTS = {
    id(p.Int8): (-(2**7), 2**7 - 1),
    id(p.Int16): (-(2**15), 2**15 - 1),
    id(p.Int32): (-(2**31), 2**31 - 1),
    id(p.Int64): (-(2**63), 2**63 - 1),
    id(p.UInt16): (0, 2**16 - 1),
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
    if isinstance(value, tuple):
        return [_default(v) for v in value]
    if isinstance(value, dict):
        return {k: _default(v) for k, v in value.items()}
    return value


def type_strategy(
    ftype: Any, version: int, nullable: bool, flexible: bool = False, unknown_tags: bool = True
) -> st.SearchStrategy[Any]:
    if isinstance(ftype, Nested):
        base: st.SearchStrategy[Any] = struct_strategy(ftype.fields, version, flexible, unknown_tags)
    elif ftype is String:
        base: st.SearchStrategy[Any] = st.text(max_size=12)
    elif ftype is Bytes or ftype is Records:
        base = st.binary(max_size=40)
    elif isinstance(ftype, Array):
        if isinstance(ftype.of, (list, tuple)):
            elem = struct_strategy(ftype.of, version, flexible, unknown_tags)
        else:
            elem = type_strategy(ftype.of, version, False, flexible, unknown_tags)
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


def _field_strategy(f: Field, version: int, flexible: bool, unknown_tags: bool) -> st.SearchStrategy[Any]:
    compact = _compact(f, version, flexible)
    return type_strategy(f.type, version, f.nullable_in(version), compact, unknown_tags)


def struct_strategy(
    fields: tuple[Field, ...] | list[Field], version: int, flexible: bool = False, unknown_tags: bool = True
) -> st.SearchStrategy[Any]:
    members: dict[str, st.SearchStrategy[Any]] = {
        f.name: _field_strategy(f, version, flexible, unknown_tags)
        for f in fields
        if f.present_in(version) and f.tag is None
    }
    if flexible:
        known = st.fixed_dictionaries(
            {
                f.name: st.just(_default(default_of(f, version, _compact(f, version, flexible))))
                | _field_strategy(f, version, flexible, unknown_tags)
                for f in fields
                if f.present_in(version) and f.tag is not None
            }
        )
        unknown = UNKNOWN_TAGS if unknown_tags else st.just({})
        members["tagged_fields"] = st.builds(lambda k, u: {**k, **u}, known, unknown)
    return st.fixed_dictionaries(members)


@functools.cache
def message_strategy(msg: Message, version: int, unknown_tags: bool = True) -> st.SearchStrategy[Any]:
    """Bodies of ``msg`` at ``version`` (built once: tests draw from it per example).

    ``unknown_tags=False`` leaves out tags kproto does not know, for peers
    that drop them on encoding (kafka-python).
    """
    return struct_strategy(msg.fields, version, msg.is_flexible(version), unknown_tags)


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
