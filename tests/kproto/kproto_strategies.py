"""Hypothesis strategies derived from kproto's own declarations, and a
converter to kafka-python's positional form.

Generating values from the declarations means a new field or version is
covered by every round-trip, golden and fuzz test without touching them.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from kproto import primitives as p
from kproto.registry import REQUESTS, RESPONSES
from kproto.schema import Array, Bytes, Field, Message, Records, String

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


def type_strategy(ftype: Any, version: int, nullable: bool) -> st.SearchStrategy[Any]:
    if ftype is String:
        base: st.SearchStrategy[Any] = st.text(max_size=12)
    elif ftype is Bytes or ftype is Records:
        base = st.binary(max_size=40)
    elif isinstance(ftype, Array):
        if isinstance(ftype.of, (list, tuple)):
            elem = struct_strategy(ftype.of, version)
        else:
            elem = type_strategy(ftype.of, version, False)
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


def struct_strategy(fields: tuple[Field, ...] | list[Field], version: int) -> st.SearchStrategy[Any]:
    return st.fixed_dictionaries(
        {
            f.name: type_strategy(f.type, version, f.nullable_in(version))
            for f in fields
            if f.present_in(version) and f.tag is None
        }
    )


def message_strategy(msg: Message, version: int) -> st.SearchStrategy[Any]:
    return struct_strategy(msg.fields, version)


def all_versions(table: dict[int, Message]) -> list[tuple[Message, int]]:
    return [(msg, v) for _, msg in sorted(table.items()) for v in range(msg.min_version, msg.max_version + 1)]


REQUEST_VERSIONS = all_versions(REQUESTS)
RESPONSE_VERSIONS = all_versions(RESPONSES)


def ids(pairs: list[tuple[Message, int]]) -> list[str]:
    return [f"{m.name}-v{v}" for m, v in pairs]


def _present(fields: tuple[Field, ...] | list[Field], version: int) -> list[Field]:
    return [f for f in fields if f.present_in(version) and f.tag is None]


def to_positional(
    fields: tuple[Field, ...] | list[Field], version: int, value: dict[str, Any]
) -> tuple[Any, ...]:
    """kproto's dict form -> kafka-python's positional tuples (same field order).

    kafka-python declares an array of one-field structs as an array of that
    field (same bytes), so such elements are flattened.
    """
    out = []
    for f in _present(fields, version):
        v = value[f.name]
        if isinstance(f.type, Array) and isinstance(f.type.of, (list, tuple)) and v is not None:
            inner = _present(f.type.of, version)
            if len(inner) == 1:
                v = [item[inner[0].name] for item in v]
            else:
                v = [to_positional(f.type.of, version, item) for item in v]
        out.append(v)
    return tuple(out)


def from_positional(fields: tuple[Field, ...] | list[Field], version: int, value: Any) -> dict[str, Any]:
    """kafka-python's decoded Struct (or tuple) -> kproto's dict form."""
    if hasattr(value, "SCHEMA"):
        value = [getattr(value, name) for name in value.SCHEMA.names]
    out = {}
    for f, v in zip(_present(fields, version), value, strict=True):
        if isinstance(f.type, Array) and isinstance(f.type.of, (list, tuple)) and v is not None:
            inner = _present(f.type.of, version)
            if len(inner) == 1:
                v = [{inner[0].name: item} for item in v]
            else:
                v = [from_positional(f.type.of, version, item) for item in v]
        elif isinstance(f.type, Array) and v is not None:
            v = list(v)
        out[f.name] = v
    return out


def plain(value: Any) -> Any:
    """Containers/ListContainers -> dicts/lists without tagged-field noise, for comparisons."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items() if not k.startswith("_")}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value
