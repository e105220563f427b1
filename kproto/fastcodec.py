"""Generated Python for each (message, version): the fast path of every grammar.

Construct's compiled grammars cost a function call or two per field and a
``Container`` per struct built through its generic machinery; a Metadata
response of a thousand partitions took milliseconds.  This module writes,
once per (message, version), one plain Python function that decodes the
whole body with ``struct.unpack_from`` over consecutive fixed-width fields
(across an array between two such runs too, when it is empty or null),
inline varints and inline loops, and one that encodes it into a
``bytearray`` the same way.  The Construct grammar of :mod:`kproto.schema`
stays the reference: ``tests/kproto/test_fastcodec.py`` proves, at every
version the registry declares, that both functions produce exactly what the
grammar produces, and that on damaged input the fast decoder either fails
or agrees with the grammar.

Rules of this module:

* A fast function may fail on anything (short input, a bad length, a value
  out of range, a missing key); it never decides what is an error.  The
  codec then runs the grammar, which raises kproto's usual error with the
  field's path.  So the fast path changes speed, never behaviour.
* Decoding yields what the grammar yields: a ``Container`` per struct with
  the version's fields in declaration order and, in flexible versions, a
  ``tagged_fields`` dict (known tags at their defaults unless present; with
  no tag in the frame and only immutable defaults, the declaration's one
  shared read-only dict, as the grammar hands out); arrays are lists.
  Tagged fields that are present, and encoding tagged fields that are set,
  go through the grammar's own ``TaggedFields``.
* Only the types messages use are generated; a declaration with any other
  type gets no fast functions (the grammar serves it).
"""

from __future__ import annotations

import io
import keyword
import struct
from collections.abc import Callable, Sequence
from typing import Any

from construct import Container

from kproto import primitives as p
from kproto.primitives import TaggedFields, absent_tags, shared_default
from kproto.schema import (
    Array,
    Bytes,
    Field,
    Message,
    Nested,
    Records,
    String,
    Versions,
    _resolve,
    default_of,
)

__all__ = ["Decoder", "Encoder", "fast_decoder", "fast_encoder"]

Decoder = Callable[[bytes, int], tuple[Any, int]]
Encoder = Callable[[Any, bytearray], None]

_FIXED: dict[int, str] = {
    id(p.Int8): "b",
    id(p.Int16): "h",
    id(p.Int32): "i",
    id(p.Int64): "q",
    id(p.UInt16): "H",
    id(p.UInt32): "I",
    id(p.Float64): "d",
    id(p.Boolean): "?",
}


# Precompiled formats of short arrays of fixed-width items: [">0i", ">1i", ...].
_SHORT = 64
_FORMATS: dict[str, tuple[struct.Struct, ...]] = {
    code: tuple(struct.Struct(f">{k}{code}") for k in range(_SHORT)) for code in set(_FIXED.values())
}


class _Unsupported(Exception):  # noqa: N818 - a signal inside this module
    """A type this generator does not write code for."""


def _uvarint(data: bytes, pos: int) -> tuple[int, int]:
    """Unsigned varint at ``pos`` (as :func:`kproto.primitives.read_uvarint`, 32 bits)."""
    value = 0
    shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7
        if shift >= 39:
            raise ValueError("varint too long")


def _put_uvarint(value: int, buf: bytearray) -> None:
    if value < 0:
        raise ValueError(value)
    while value > 0x7F:
        buf.append((value & 0x7F) | 0x80)
        value >>= 7
    buf.append(value)


def _read_tags(con: TaggedFields, data: bytes, pos: int) -> tuple[dict[Any, Any], int]:
    stream = io.BytesIO(data)
    stream.seek(pos)
    return con._read(stream), stream.tell()


def _write_tags(con: TaggedFields, tags: Any, buf: bytearray) -> None:
    stream = io.BytesIO()
    con._write(tags, stream)
    buf += stream.getbuffer()


def _check_uuid(value: Any) -> bytes:
    if not isinstance(value, (bytes, bytearray)) or len(value) != 16:
        raise ValueError("a UUID is 16 bytes")
    return bytes(value)


class _Gen:
    """Writes one function's source; ``globs`` holds the objects it refers to."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.globs: dict[str, Any] = {
            "Container": Container,
            "unpack_from": struct.unpack_from,
            "pack": struct.pack,
            "_uvarint": _uvarint,
            "_put_uvarint": _put_uvarint,
            "_read_tags": _read_tags,
            "_write_tags": _write_tags,
            "_check_uuid": _check_uuid,
        }
        self.n = 0

    def var(self, prefix: str) -> str:
        self.n += 1
        return f"_{prefix}{self.n}"

    def emit(self, indent: int, line: str) -> None:
        self.lines.append("    " * indent + line)

    def const(self, prefix: str, value: Any) -> str:
        name = self.var(prefix)
        self.globs[name] = value
        return name

    def struct(self, ind: int, target: str, items: list[tuple[str, str]]) -> None:
        """``target`` = the decoded struct of ``items`` (name, variable) in order: a Container
        (a subclass may build other values, to measure them)."""
        self.emit(ind, f"{target} = {_container(items)}")

    def fmt(self, fmt: str) -> str:
        """A precompiled ``struct.Struct`` for ``fmt`` (one global per format)."""
        key = "_S" + "".join(c if c.isalnum() else "_" for c in fmt)
        self.globs.setdefault(key, struct.Struct(fmt))
        return key


def _literal(g: _Gen, default: Any) -> str:
    """Source for a tagged field's default as the grammar hands it out: the shared
    read-only struct (:func:`kproto.primitives.shared_default`) or a fresh copy."""
    if isinstance(default, tuple):
        return "[" + ", ".join(_literal(g, d) for d in default) + "]"
    if isinstance(default, dict) and not default:
        return "{}"  # an empty tagged-fields dict
    shared = shared_default(default)
    if shared is not None:
        return g.const("dflt", shared)
    if isinstance(default, dict):
        return "Container({" + ", ".join(f"{k!r}: {_literal(g, v)}" for k, v in default.items()) + "})"
    if default is None or isinstance(default, (bool, int, float, str, bytes)):
        return repr(default)
    raise _Unsupported(default)


def _compact(f: Field, version: int, flexible: bool) -> bool:
    return flexible if f.flexible is None else version in Versions.parse(f.flexible)


# --------------------------------------------------------------------------
# Decoding
# --------------------------------------------------------------------------


def _d_length(g: _Gen, ind: int, target: str, compact: bool, wide: bool) -> None:
    """``target`` = a length prefix (-1: null), as the grammar reads it."""
    if compact:  # one- and two-byte varints inline, longer ones by a call
        g.emit(ind, f"{target} = data[pos]")
        g.emit(ind, f"if {target} < 0x80:")
        g.emit(ind + 1, "pos += 1")
        g.emit(ind, "elif data[pos + 1] < 0x80:")
        g.emit(ind + 1, f"{target} = ({target} & 0x7F) | (data[pos + 1] << 7)")
        g.emit(ind + 1, "pos += 2")
        g.emit(ind, "else:")
        g.emit(ind + 1, f"{target}, pos = _uvarint(data, pos)")
        g.emit(ind, f"{target} -= 1")
    else:
        g.emit(ind, f"{target} = {g.fmt('>i' if wide else '>h')}.unpack_from(data, pos)[0]")
        g.emit(ind, f"pos += {4 if wide else 2}")


def _d_blob(g: _Gen, ind: int, target: str, nullable: bool, compact: bool, text: bool) -> None:
    n = g.var("n")
    _d_length(g, ind, n, compact, wide=not text)
    g.emit(ind, f"if {n} < 0:")
    if nullable:
        g.emit(ind + 1, f"if {n} != -1: raise ValueError({n})")
        g.emit(ind + 1, f"{target} = None")
    else:
        g.emit(ind + 1, f"raise ValueError({n})")
    g.emit(ind, "else:")
    g.emit(ind + 1, f"_end = pos + {n}")
    g.emit(ind + 1, "if _end > _len: raise ValueError('short')")
    g.emit(ind + 1, f"{target} = str(data[pos:_end], 'utf-8')" if text else f"{target} = data[pos:_end]")
    g.emit(ind + 1, "pos = _end")


def _d_type(g: _Gen, ind: int, target: str, ftype: Any, version: int, nullable: bool, compact: bool) -> None:
    if ftype is String:
        _d_blob(g, ind, target, nullable, compact, text=True)
    elif ftype is Bytes or ftype is Records:
        _d_blob(g, ind, target, nullable, compact, text=False)
    elif ftype is p.Uuid:
        g.emit(ind, "_end = pos + 16")
        g.emit(ind, "if _end > _len: raise ValueError('short')")
        g.emit(ind, f"{target} = data[pos:_end]")
        g.emit(ind, "pos = _end")
    elif id(ftype) in _FIXED:
        fmt = ">" + _FIXED[id(ftype)]
        g.emit(ind, f"{target} = {g.fmt(fmt)}.unpack_from(data, pos)[0]")
        g.emit(ind, f"pos += {struct.calcsize(fmt)}")
    elif isinstance(ftype, Nested):
        if nullable:
            g.emit(ind, "if data[pos] >= 0x80:")
            g.emit(ind + 1, "pos += 1")
            g.emit(ind + 1, f"{target} = None")
            g.emit(ind, "else:")
            g.emit(ind + 1, "pos += 1")
            _d_struct(g, ind + 1, target, ftype.fields, version, compact)
        else:
            _d_struct(g, ind, target, ftype.fields, version, compact)
    elif isinstance(ftype, Array):
        n = g.var("n")
        _d_length(g, ind, n, compact, wide=True)
        g.emit(ind, f"if {n} < 0:")
        if nullable:
            g.emit(ind + 1, f"if {n} != -1: raise ValueError({n})")
            g.emit(ind + 1, f"{target} = None")
        else:
            g.emit(ind + 1, f"raise ValueError({n})")
        g.emit(ind, "else:")
        of = ftype.of
        if not isinstance(of, (list, tuple)) and id(of) in _FIXED:
            code = _FIXED[id(of)]
            size = struct.calcsize(">" + code)
            fmts = g.const("fmts", _FORMATS[code])
            g.emit(ind + 1, f"if not {n}:")  # empty (most offline-replica lists): no unpack
            g.emit(ind + 2, f"{target} = []")
            g.emit(ind + 1, f"elif {n} < {_SHORT}:")
            g.emit(ind + 2, f"{target} = list({fmts}[{n}].unpack_from(data, pos))")
            g.emit(ind + 2, f"pos += {size} * {n}")
            g.emit(ind + 1, "else:")
            g.emit(ind + 2, f"{target} = list(unpack_from('>%d{code}' % {n}, data, pos))")
            g.emit(ind + 2, f"pos += {size} * {n}")
            return
        g.emit(ind + 1, f"{target} = []")
        item = g.var("it")
        g.emit(ind + 1, f"if {n}:")  # an empty array (most aborted-transaction lists) skips the loop
        g.emit(ind + 2, f"for _ in range({n}):")
        if isinstance(of, (list, tuple)):
            _d_struct(g, ind + 3, item, of, version, compact)
        else:
            _d_type(g, ind + 3, item, of, version, False, compact)
        g.emit(ind + 3, f"{target}.append({item})")
    else:
        raise _Unsupported(ftype)


def _d_fused_array(
    g: _Gen,
    ind: int,
    head: list[tuple[str, str]],
    f: Field,
    compact: bool,
    tail: list[tuple[str, str]],
    version: int,
    names: list[tuple[str, str]],
) -> None:
    """An array between two runs of fixed-width fields, read in one unpack when it is empty or null.

    Most arrays between such fields are empty (a Fetch partition's aborted
    transactions): one ``unpack_from`` then reads the fields before, the
    length and the fields after.  Otherwise the array and the fields after
    are read as usual.  The single read never asks for bytes a valid frame
    lacks: the fields after the array follow its length in any frame."""
    code = "B" if compact else "i"  # the length: a one-byte uvarint(n + 1), or int32 n
    empty, null = (1, 0) if compact else (0, -1)
    head_fmt = ">" + "".join(c for _, c in head)
    tail_fmt = ">" + "".join(c for _, c in tail)
    head_vars = [g.var("v") for _ in head]
    tail_vars = [g.var("v") for _ in tail]
    n, v = g.var("n"), g.var("v")
    _unpack(g, ind, [*head_vars, n, *tail_vars], head_fmt + code + tail_fmt[1:])
    size = struct.calcsize(head_fmt + code + tail_fmt[1:])
    g.emit(ind, f"if {n} == {empty}:")
    g.emit(ind + 1, f"{v} = []")
    g.emit(ind + 1, f"pos += {size}")
    if f.nullable_in(version):
        g.emit(ind, f"elif {n} == {null}:")
        g.emit(ind + 1, f"{v} = None")
        g.emit(ind + 1, f"pos += {size}")
    g.emit(ind, "else:")
    g.emit(ind + 1, f"pos += {struct.calcsize(head_fmt)}")
    _d_type(g, ind + 1, v, f.type, version, f.nullable_in(version), compact)
    if tail:
        _unpack(g, ind + 1, tail_vars, tail_fmt)
        g.emit(ind + 1, f"pos += {struct.calcsize(tail_fmt)}")
    names.extend((name, var) for (name, _), var in zip(head, head_vars, strict=True))
    names.append((f.name, v))
    names.extend((name, var) for (name, _), var in zip(tail, tail_vars, strict=True))


def _unpack(g: _Gen, ind: int, vars_: list[str], fmt: str) -> None:
    """``vars_`` = the fixed-width values of ``fmt`` at ``pos`` (``pos`` left where it was)."""
    g.emit(ind, f"{', '.join(vars_)}{',' if len(vars_) == 1 else ''} = {g.fmt(fmt)}.unpack_from(data, pos)")


def _d_struct(g: _Gen, ind: int, target: str, fields: Sequence[Field], version: int, flexible: bool) -> None:
    names: list[tuple[str, str]] = []
    run: list[tuple[str, str]] = []  # (field name, struct code) of consecutive fixed-width fields

    def flush() -> None:
        if not run:
            return
        fmt = ">" + "".join(code for _, code in run)
        vars_ = [g.var("v") for _ in run]
        _unpack(g, ind, vars_, fmt)
        g.emit(ind, f"pos += {struct.calcsize(fmt)}")
        names.extend((name, v) for (name, _), v in zip(run, vars_, strict=True))
        run.clear()

    tagged: dict[int, tuple[str, Any, Any]] = {}
    body: list[tuple[Field, bool]] = []  # the fields in the frame's body, with their compactness
    for f in fields:
        if not f.present_in(version):
            continue
        compact = _compact(f, version, flexible)
        if f.tag is None:
            body.append((f, compact))
        elif flexible:
            con = _resolve(f.type, version, compact, f.nullable_in(version))
            tagged[f.tag] = (f.name, con, default_of(f, version, compact))
    i = 0
    while i < len(body):
        f, compact = body[i]
        i += 1
        if id(f.type) in _FIXED:
            run.append((f.name, _FIXED[id(f.type)]))
            continue
        if isinstance(f.type, Array):
            tail: list[tuple[str, str]] = []
            while i < len(body) and id(body[i][0].type) in _FIXED:
                tail.append((body[i][0].name, _FIXED[id(body[i][0].type)]))
                i += 1
            if run or tail:
                _d_fused_array(g, ind, run, f, compact, tail, version, names)
                run.clear()
                continue
        flush()
        v = g.var("v")
        _d_type(g, ind, v, f.type, version, f.nullable_in(version), compact)
        names.append((f.name, v))
    flush()
    if flexible:
        tf = g.var("tf")
        con_name = g.const("tfc", TaggedFields(tagged))
        g.emit(ind, "if data[pos] == 0:")
        g.emit(ind + 1, "pos += 1")
        absent = absent_tags({name: default for name, _, default in tagged.values()})
        if absent is not None:
            g.emit(ind + 1, f"{tf} = {g.const('absent', absent)}")
        else:
            defaults = [f"{name!r}: {_literal(g, default)}" for name, _, default in tagged.values()]
            g.emit(ind + 1, f"{tf} = {{{', '.join(defaults)}}}")
        g.emit(ind, "else:")
        g.emit(ind + 1, f"{tf}, pos = _read_tags({con_name}, data, pos)")
        names.append(("tagged_fields", tf))
    g.struct(ind, target, names)


def _container(items: list[tuple[str, str]]) -> str:
    """Source building a Container of ``items`` (name, variable) in order: by keywords,
    a little cheaper than from a dict literal, unless a name cannot be one."""
    if all(name.isidentifier() and not keyword.iskeyword(name) for name, _ in items):
        return "Container(" + ", ".join(f"{name}={v}" for name, v in items) + ")"
    return "Container({" + ", ".join(f"{name!r}: {v}" for name, v in items) + "})"


# --------------------------------------------------------------------------
# Encoding
# --------------------------------------------------------------------------


def _e_length(g: _Gen, ind: int, expr: str, compact: bool, wide: bool) -> None:
    if compact:
        g.emit(ind, f"_l = {expr} + 1")
        g.emit(ind, "if 0 <= _l < 0x80: buf.append(_l)")
        g.emit(ind, "else: _put_uvarint(_l, buf)")
    elif wide:
        g.emit(ind, f"buf += {g.fmt('>i')}.pack({expr})")
    else:
        g.emit(ind, f"buf += {g.fmt('>h')}.pack({expr})")


def _e_null(g: _Gen, ind: int, value: str, nullable: bool, compact: bool, wide: bool) -> None:
    """Open ``if value is None: <null> / else:`` (the caller writes the else body at ind + 1)."""
    g.emit(ind, f"if {value} is None:")
    if nullable:
        _e_length(g, ind + 1, "-1", compact, wide)
    else:
        g.emit(ind + 1, "raise ValueError('null given for a non-nullable field')")
    g.emit(ind, "else:")


def _e_type(g: _Gen, ind: int, value: str, ftype: Any, version: int, nullable: bool, compact: bool) -> None:
    if ftype is String:
        _e_null(g, ind, value, nullable, compact, wide=False)
        g.emit(ind + 1, f"_raw = {value}.encode('utf-8')")
        if not compact:
            g.emit(ind + 1, "if len(_raw) > 0x7FFF: raise ValueError('string too long')")
        _e_length(g, ind + 1, "len(_raw)", compact, wide=False)
        g.emit(ind + 1, "buf += _raw")
    elif ftype is Bytes or ftype is Records:
        _e_null(g, ind, value, nullable, compact, wide=True)
        _e_length(g, ind + 1, f"len({value})", compact, wide=True)
        g.emit(ind + 1, f"buf += {value}")
    elif ftype is p.Uuid:
        g.emit(ind, f"buf += _check_uuid({value})")
    elif id(ftype) in _FIXED:
        g.emit(ind, f"buf += {g.fmt('>' + _FIXED[id(ftype)])}.pack({value})")
    elif isinstance(ftype, Nested):
        if nullable:
            g.emit(ind, f"if {value} is None:")
            g.emit(ind + 1, "buf.append(0xFF)")
            g.emit(ind, "else:")
            g.emit(ind + 1, "buf.append(1)")
            _e_struct(g, ind + 1, value, ftype.fields, version, compact)
        else:
            _e_struct(g, ind, value, ftype.fields, version, compact)
    elif isinstance(ftype, Array):
        _e_null(g, ind, value, nullable, compact, wide=True)
        _e_length(g, ind + 1, f"len({value})", compact, wide=True)
        of = ftype.of
        if not isinstance(of, (list, tuple)) and id(of) in _FIXED:
            code = _FIXED[id(of)]
            fmts = g.const("fmts", _FORMATS[code])
            g.emit(ind + 1, f"_k = len({value})")
            g.emit(ind + 1, f"if _k < {_SHORT}: buf += {fmts}[_k].pack(*{value})")
            g.emit(ind + 1, f"else: buf += pack('>%d{code}' % _k, *{value})")
            return
        item = g.var("it")
        g.emit(ind + 1, f"for {item} in {value}:")
        if isinstance(of, (list, tuple)):
            _e_struct(g, ind + 2, item, of, version, compact)
        else:
            _e_type(g, ind + 2, item, of, version, False, compact)
    else:
        raise _Unsupported(ftype)


def _e_struct(g: _Gen, ind: int, obj: str, fields: Sequence[Field], version: int, flexible: bool) -> None:
    run: list[tuple[str, str]] = []

    def flush() -> None:
        if run:
            fmt = ">" + "".join(code for _, code in run)
            args = ", ".join(f"{obj}[{name!r}]" for name, _ in run)
            g.emit(ind, f"buf += {g.fmt(fmt)}.pack({args})")
            run.clear()

    tagged: dict[int, tuple[str, Any, Any]] = {}
    for f in fields:
        if not f.present_in(version):
            continue
        compact = _compact(f, version, flexible)
        if f.tag is not None:
            if flexible:
                con = _resolve(f.type, version, compact, f.nullable_in(version))
                tagged[f.tag] = (f.name, con, default_of(f, version, compact))
            continue
        if id(f.type) in _FIXED:
            run.append((f.name, _FIXED[id(f.type)]))
            continue
        flush()
        v = g.var("v")
        g.emit(ind, f"{v} = {obj}[{f.name!r}]")
        _e_type(g, ind, v, f.type, version, f.nullable_in(version), compact)
    flush()
    if flexible:
        con_name = g.const("tfc", TaggedFields(tagged))
        tf = g.var("tf")
        g.emit(ind, f"{tf} = {obj}.get('tagged_fields')")
        g.emit(ind, f"if not {tf}: buf.append(0)")
        g.emit(ind, f"else: _write_tags({con_name}, {tf}, buf)")


# --------------------------------------------------------------------------
# Compiling
# --------------------------------------------------------------------------

_DECODERS: dict[tuple[int, int], Decoder | None] = {}
_ENCODERS: dict[tuple[int, int], Encoder | None] = {}


def _compile(g: _Gen, name: str) -> Any:
    source = "\n".join(g.lines)
    exec(compile(source, f"<kproto.fastcodec {name}>", "exec"), g.globs)
    return g.globs[name]


def fast_decoder(message: Message, version: int) -> Decoder | None:
    """``f(data, pos) -> (body, pos)`` for ``message`` at ``version``, or None."""
    key = (id(message), version)
    if key not in _DECODERS:
        _DECODERS[key] = generate_decoder(message, version, _Gen())
    return _DECODERS[key]


def generate_decoder(message: Message, version: int, g: _Gen) -> Decoder | None:
    """A new decoder for ``message`` at ``version`` written by ``g``, or None (not cached)."""
    g.emit(0, "def decode(data, pos):")
    g.emit(1, "_len = len(data)")
    try:
        _d_struct(g, 1, "_body", message.fields, version, message.is_flexible(version))
    except _Unsupported:
        return None
    g.emit(1, "return _body, pos")
    decode: Decoder = _compile(g, "decode")
    return decode


def fast_encoder(message: Message, version: int) -> Encoder | None:
    """``f(body, buf)`` appending ``message`` at ``version`` to ``buf``, or None."""
    key = (id(message), version)
    if key not in _ENCODERS:
        g = _Gen()
        g.emit(0, "def encode(body, buf):")
        try:
            _e_struct(g, 1, "body", message.fields, version, message.is_flexible(version))
        except _Unsupported:
            _ENCODERS[key] = None
        else:
            g.emit(1, "pass")
            _ENCODERS[key] = _compile(g, "encode")
    return _ENCODERS[key]
