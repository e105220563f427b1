"""Kafka's primitive wire types as small Construct classes.

Kafka's protocol guide names these types (``INT16``, ``STRING``,
``NULLABLE_BYTES``, ``ARRAY``, ``UNSIGNED_VARINT``, ``COMPACT_STRING``,
``TAGGED_FIELDS`` ...); each has one class here.

Rules of this module:

* Every class works both interpreted and inside ``Struct(...).compile()``:
  scalars hand Construct a plain function to link (a direct call from the
  generated code), arrays emit code so their element grammar is compiled too.
* Reading never trusts a length: short input raises ``StreamError`` and
  negative lengths other than the null marker raise ``ValidationError``; the
  codec layer turns both into :class:`kproto.errors.DecodeError`.
* Null (``None``) is accepted only by the ``nullable`` variants, so that
  encoding a missing value is an error rather than a silent ``-1``.
"""

from __future__ import annotations

import struct
from typing import Any, BinaryIO

from construct import (
    Construct,
    ConstructError,
    Container,
    Float64b,
    Int8sb,
    Int16sb,
    Int16ub,
    Int32sb,
    Int32ub,
    Int64sb,
    ListContainer,
    StreamError,
    Subconstruct,
    ValidationError,
)

__all__ = [
    "Boolean",
    "Float64",
    "Int8",
    "Int16",
    "Int32",
    "Int64",
    "KArray",
    "KBytes",
    "KString",
    "NullableStruct",
    "TaggedFields",
    "UInt16",
    "UInt32",
    "UVarint",
    "Uuid",
    "Varint",
    "Varlong",
    "read_exact",
]

Int8 = Int8sb
Int16 = Int16sb
Int32 = Int32sb
Int64 = Int64sb
UInt16 = Int16ub
UInt32 = Int32ub
Float64 = Float64b

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_NULL16 = _I16.pack(-1)
_NULL32 = _I32.pack(-1)


def read_exact(stream: BinaryIO, n: int) -> bytes:
    """Read exactly ``n`` bytes or raise ``StreamError``."""
    if n < 0:
        raise ValidationError(f"negative length {n}")
    data = stream.read(n)
    if len(data) != n:
        raise StreamError(f"expected {n} bytes, only {len(data)} left")
    return data


class _Linked(Construct):
    """A primitive whose reader/writer are plain functions.

    The compiled grammar calls them directly (``linkedparsers[...]``), which
    costs one Python call per field, the same as Construct's own emitted code.
    """

    def _read(self, stream: BinaryIO) -> Any:
        raise NotImplementedError

    def _write(self, obj: Any, stream: BinaryIO) -> Any:
        raise NotImplementedError

    def _parse(self, stream: BinaryIO, context: Any, path: str) -> Any:
        try:
            return self._read(stream)
        except ConstructError as exc:
            exc.path = exc.path or path
            raise
        except (struct.error, UnicodeDecodeError, ValueError) as exc:
            raise ValidationError(str(exc), path=path) from exc

    def _build(self, obj: Any, stream: BinaryIO, context: Any, path: str) -> Any:
        try:
            return self._write(obj, stream)
        except ConstructError as exc:
            exc.path = exc.path or path
            raise
        except (struct.error, UnicodeEncodeError, TypeError, ValueError, AttributeError) as exc:
            raise ValidationError(str(exc), path=path) from exc

    def _emitparse(self, code: Any) -> str:
        key = f"kp{id(self)}"
        code.linkedparsers[key] = self._read
        return f"linkedparsers[{key!r}](io)"

    def _emitbuild(self, code: Any) -> str:
        key = f"kp{id(self)}"
        code.linkedbuilders[key] = self._write
        return f"linkedbuilders[{key!r}](obj, io)"


# --------------------------------------------------------------------------
# Varints (protocol guide: UNSIGNED_VARINT, VARINT, VARLONG)
# --------------------------------------------------------------------------


def read_uvarint(stream: BinaryIO, max_bits: int = 32) -> int:
    """Unsigned LEB128 varint of at most ``max_bits`` bits."""
    value = 0
    shift = 0
    while True:
        b = stream.read(1)
        if not b:
            raise StreamError("truncated varint")
        byte = b[0]
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value
        shift += 7
        if shift >= max_bits + 7:
            raise ValidationError("varint too long")


def write_uvarint(value: int, stream: BinaryIO) -> None:
    if value < 0:
        raise ValidationError(f"unsigned varint cannot hold {value}")
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    stream.write(out)


class UVarintType(_Linked):
    """UNSIGNED_VARINT: 32-bit unsigned LEB128."""

    def _read(self, stream: BinaryIO) -> int:
        value = read_uvarint(stream, 32)
        if value >= 1 << 32:
            raise ValidationError("unsigned varint exceeds 32 bits")
        return value

    def _write(self, obj: int, stream: BinaryIO) -> int:
        if not 0 <= obj < 1 << 32:
            raise ValidationError(f"unsigned varint out of range: {obj}")
        write_uvarint(obj, stream)
        return obj


class ZigZagType(_Linked):
    """VARINT / VARLONG: zig-zag encoded signed integers of ``bits`` bits."""

    def __init__(self, bits: int) -> None:
        super().__init__()
        self.bits = bits

    def _read(self, stream: BinaryIO) -> int:
        raw = read_uvarint(stream, self.bits)
        if raw >= 1 << self.bits:
            raise ValidationError(f"varint exceeds {self.bits} bits")
        return (raw >> 1) ^ -(raw & 1)

    def _write(self, obj: int, stream: BinaryIO) -> int:
        lim = 1 << (self.bits - 1)
        if not -lim <= obj < lim:
            raise ValidationError(f"{obj} does not fit a {self.bits}-bit varint")
        write_uvarint((obj << 1) ^ (obj >> (self.bits - 1)), stream)
        return obj


UVarint = UVarintType()
Varint = ZigZagType(32)
Varlong = ZigZagType(64)


class BooleanType(_Linked):
    """BOOLEAN: one byte, 0 false, anything else true (Kafka reads it so)."""

    def _read(self, stream: BinaryIO) -> bool:
        return read_exact(stream, 1) != b"\x00"

    def _write(self, obj: bool, stream: BinaryIO) -> bool:
        stream.write(b"\x01" if obj else b"\x00")
        return obj


class UuidType(_Linked):
    """UUID: 16 raw bytes (kept as ``bytes``; all zero means "no id")."""

    def _read(self, stream: BinaryIO) -> bytes:
        return read_exact(stream, 16)

    def _write(self, obj: bytes, stream: BinaryIO) -> bytes:
        if not isinstance(obj, (bytes, bytearray)) or len(obj) != 16:
            raise ValidationError("a UUID is 16 bytes")
        stream.write(obj)
        return obj


Boolean = BooleanType()
Uuid = UuidType()


# --------------------------------------------------------------------------
# Lengths: int16/int32 (classic) or uvarint(n + 1) (compact); -1 / 0 = null
# --------------------------------------------------------------------------


def _read_length(stream: BinaryIO, compact: bool, wide: bool) -> int:
    """Length prefix, ``-1`` meaning null."""
    if compact:
        return read_uvarint(stream, 32) - 1
    if wide:
        return int(_I32.unpack(read_exact(stream, 4))[0])
    return int(_I16.unpack(read_exact(stream, 2))[0])


def _write_length(n: int, stream: BinaryIO, compact: bool, wide: bool) -> None:
    if compact:
        write_uvarint(n + 1, stream)
    elif wide:
        stream.write(_I32.pack(n))
    else:
        if n > 0x7FFF:
            raise ValidationError(f"string of {n} bytes exceeds int16 length")
        stream.write(_I16.pack(n))


class KBytesType(_Linked):
    """BYTES / NULLABLE_BYTES / COMPACT_(NULLABLE_)BYTES, and RECORDS.

    Values are ``bytes`` (``None`` for null when nullable).
    """

    def __init__(self, *, nullable: bool = False, compact: bool = False) -> None:
        super().__init__()
        self.nullable = nullable
        self.compact = compact

    def _read(self, stream: BinaryIO) -> bytes | None:
        n = _read_length(stream, self.compact, True)
        if n == -1 and self.nullable:
            return None
        return read_exact(stream, n)

    def _write(self, obj: bytes | None, stream: BinaryIO) -> bytes | None:
        if obj is None:
            if not self.nullable:
                raise ValidationError("null given for non-nullable bytes")
            _write_length(-1, stream, self.compact, True)
            return None
        _write_length(len(obj), stream, self.compact, True)
        stream.write(obj)
        return obj


class KStringType(_Linked):
    """STRING / NULLABLE_STRING / COMPACT_(NULLABLE_)STRING, UTF-8."""

    def __init__(self, *, nullable: bool = False, compact: bool = False) -> None:
        super().__init__()
        self.nullable = nullable
        self.compact = compact

    def _read(self, stream: BinaryIO) -> str | None:
        n = _read_length(stream, self.compact, False)
        if n == -1 and self.nullable:
            return None
        return read_exact(stream, n).decode("utf-8")

    def _write(self, obj: str | None, stream: BinaryIO) -> str | None:
        if obj is None:
            if not self.nullable:
                raise ValidationError("null given for non-nullable string")
            _write_length(-1, stream, self.compact, False)
            return None
        data = obj.encode("utf-8")
        _write_length(len(data), stream, self.compact, False)
        stream.write(data)
        return obj


_STRINGS = {(n, c): KStringType(nullable=n, compact=c) for n in (False, True) for c in (False, True)}
_BYTES = {(n, c): KBytesType(nullable=n, compact=c) for n in (False, True) for c in (False, True)}


def KString(*, nullable: bool = False, compact: bool = False) -> KStringType:  # noqa: N802
    """The (shared) string construct for the given flavour."""
    return _STRINGS[(nullable, compact)]


def KBytes(*, nullable: bool = False, compact: bool = False) -> KBytesType:  # noqa: N802
    """The (shared) bytes construct for the given flavour."""
    return _BYTES[(nullable, compact)]


# --------------------------------------------------------------------------
# Arrays: int32 count (classic) or uvarint(n + 1) (compact)
# --------------------------------------------------------------------------


def _array_count(stream: BinaryIO, compact: bool, nullable: bool) -> int | None:
    n = _read_length(stream, compact, True)
    if n == -1 and nullable:
        return None
    if n < 0:
        raise ValidationError(f"negative array length {n}")
    return n


def _array_head(obj: Any, stream: BinaryIO, compact: bool, nullable: bool) -> None:
    if obj is None:
        if not nullable:
            raise ValidationError("null given for non-nullable array")
        _write_length(-1, stream, compact, True)
    else:
        _write_length(len(obj), stream, compact, True)


class KArray(Subconstruct):
    """ARRAY / COMPACT_ARRAY of ``subcon``, optionally nullable.

    Parses to a ``ListContainer`` (``None`` for a null array).  Each element
    consumes at least one byte, so a forged count fails at end of input after
    at most ``len(frame)`` iterations instead of allocating or spinning.
    """

    def __init__(self, subcon: Construct, *, nullable: bool = False, compact: bool = False) -> None:
        super().__init__(subcon)
        self.nullable = nullable
        self.compact = compact

    def _parse(self, stream: BinaryIO, context: Any, path: str) -> Any:
        n = _array_count(stream, self.compact, self.nullable)
        if n is None:
            return None
        sub = self.subcon._parsereport
        return ListContainer([sub(stream, context, f"{path} -> [{i}]") for i in range(n)])

    def _build(self, obj: Any, stream: BinaryIO, context: Any, path: str) -> Any:
        _array_head(obj, stream, self.compact, self.nullable)
        if obj is None:
            return None
        for item in obj:
            self.subcon._build(item, stream, context, path)
        return obj

    def _emitparse(self, code: Any) -> str:
        code.linkedparsers["kp_array_count"] = _array_count
        fname = f"parse_karray_{code.allocateId()}"
        code.append(f"""
            def {fname}(io, this):
                n = linkedparsers['kp_array_count'](io, {self.compact}, {self.nullable})
                if n is None:
                    return None
                return ListContainer([{self.subcon._compileparse(code)} for i in range(n)])
        """)
        return f"{fname}(io, this)"

    def _emitbuild(self, code: Any) -> str:
        code.linkedbuilders["kp_array_head"] = _array_head
        fname = f"build_karray_{code.allocateId()}"
        code.append(f"""
            def {fname}(obj, io, this):
                linkedbuilders['kp_array_head'](obj, io, {self.compact}, {self.nullable})
                if obj is None:
                    return None
                for item in obj:
                    reuse(item, lambda obj: {self.subcon._compilebuild(code)})
                return obj
        """)
        return f"{fname}(obj, io, this)"


# --------------------------------------------------------------------------
# Nullable structs: int8 -1 for null, 1 followed by the struct otherwise
# --------------------------------------------------------------------------


def _struct_present(stream: BinaryIO) -> bool:
    marker = read_exact(stream, 1)[0]
    return marker < 0x80  # Kafka reads a signed byte: negative means null


def _struct_head(obj: Any, stream: BinaryIO) -> None:
    stream.write(b"\xff" if obj is None else b"\x01")


class NullableStruct(Subconstruct):
    """A struct field that may be null (Kafka's nullable struct fields)."""

    def _parse(self, stream: BinaryIO, context: Any, path: str) -> Any:
        if not _struct_present(stream):
            return None
        return self.subcon._parsereport(stream, context, path)

    def _build(self, obj: Any, stream: BinaryIO, context: Any, path: str) -> Any:
        _struct_head(obj, stream)
        if obj is None:
            return None
        self.subcon._build(obj, stream, context, path)
        return obj

    def _emitparse(self, code: Any) -> str:
        code.linkedparsers["kp_struct_present"] = _struct_present
        fname = f"parse_kstruct_{code.allocateId()}"
        code.append(f"""
            def {fname}(io, this):
                if not linkedparsers['kp_struct_present'](io):
                    return None
                return {self.subcon._compileparse(code)}
        """)
        return f"{fname}(io, this)"

    def _emitbuild(self, code: Any) -> str:
        code.linkedbuilders["kp_struct_head"] = _struct_head
        fname = f"build_kstruct_{code.allocateId()}"
        code.append(f"""
            def {fname}(obj, io, this):
                linkedbuilders['kp_struct_head'](obj, io)
                if obj is None:
                    return None
                {self.subcon._compilebuild(code)}
                return obj
        """)
        return f"{fname}(obj, io, this)"


# --------------------------------------------------------------------------
# Tagged fields (KIP-482): uvarint count, then (uvarint tag, uvarint size, bytes)
# --------------------------------------------------------------------------


def _fresh(default: Any) -> Any:
    """A parsed tagged field's default: sequences are declared as tuples
    (immutable, shareable) and handed out as fresh lists, like parsed arrays;
    a struct's default (a dict) as a fresh Container, like a parsed struct."""
    if isinstance(default, tuple):
        return ListContainer(_fresh(d) for d in default)
    if isinstance(default, dict):
        return Container({k: _fresh(v) for k, v in default.items()})
    return default


class ReadOnlyContainer(Container):
    """A struct-typed tagged field's default, shared by every decode that lacks the field.

    A Fetch response's partition carries three such fields (diverging epoch,
    current leader, snapshot id), absent from nearly every frame: building
    fresh Containers for them cost half of decoding the whole response.  One
    shared value per declaration costs nothing, and refusing changes keeps
    one decode's edit from showing up in every other: copy it
    (``Container(value)``) to change it.
    """

    __slots__ = ()

    def __init__(self, items: dict[str, Any]) -> None:
        for key, value in items.items():
            dict.__setitem__(self, key, value)

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("a tagged field's default is shared and read-only: copy it to change it")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _refuse

    def __reduce__(self) -> Any:  # copies and pickles are ordinary, mutable Containers
        return (Container, (dict(self),))

    def __deepcopy__(self, memo: dict[int, Any]) -> Container:
        import copy

        return Container({k: copy.deepcopy(v, memo) for k, v in self.items()})


class ReadOnlyTags(dict[str, Any]):
    """The tagged fields of a struct whose frame carried none, shared by every such decode.

    A struct with known tagged fields gets a dict of their defaults even when
    the frame has no tag at all (nearly every frame): a Fetch partition built
    a three-entry dict per partition for it.  Where every default is itself
    immutable (a scalar or a :class:`ReadOnlyContainer`), one dict per
    declaration serves every decode; refusing changes keeps one caller's
    edit out of every other decode: copy it (``dict(value)``) to change it.
    """

    __slots__ = ()

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("absent tagged fields are shared and read-only: copy them to change them")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = __ior__ = _refuse

    def __reduce__(self) -> Any:  # copies and pickles are ordinary, mutable dicts
        return (dict, (dict(self),))

    def __copy__(self) -> dict[Any, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[Any, Any]:
        import copy

        return {k: copy.deepcopy(v, memo) for k, v in self.items()}


def absent_tags(defaults: dict[str, Any]) -> ReadOnlyTags | None:
    """The shared tagged fields of a struct whose frame has none (``defaults``: name ->
    declared default), or None when a default must be fresh per decode (a list, a
    struct holding one) or the struct declares no tagged field (``{}`` costs nothing)."""
    if not defaults:
        return None
    items: dict[str, Any] = {}
    for name, default in defaults.items():
        if default is None or isinstance(default, (bool, int, float, str, bytes)):
            items[name] = default
            continue
        shared = shared_default(default)
        if shared is None:
            return None
        items[name] = shared
    return ReadOnlyTags(items)


def shared_default(default: Any) -> ReadOnlyContainer | None:
    """The shared read-only form of a struct default holding only scalars and empty
    tagged fields, or None: then each decode gets a fresh copy (:func:`_fresh`)."""
    if not isinstance(default, dict) or not default:
        return None
    items: dict[str, Any] = {}
    for key, value in default.items():
        if isinstance(value, dict):
            if value:
                return None
            value = ReadOnlyContainer({})
        elif not (value is None or isinstance(value, (bool, int, float, str, bytes))):
            return None
        items[key] = value
    return ReadOnlyContainer(items)


def _is_default(value: Any, default: Any) -> bool:
    """Whether a tagged field holds its default (then it is not written).

    An array compares by content whatever its sequence type, so that an
    empty list equals a declared ``()`` default; a struct equals its default
    when every field does (a missing ``tagged_fields`` counts as empty).
    """
    if isinstance(default, tuple):
        return isinstance(value, (list, tuple)) and list(value) == list(default)
    if isinstance(default, dict):
        if not isinstance(value, dict):
            return False
        for key, d in default.items():
            if key == "tagged_fields":
                tags = value.get(key) or {}
                if any(isinstance(k, int) or not _is_default(v, d.get(k)) for k, v in tags.items()):
                    return False
            elif key not in value or not _is_default(value[key], d):
                return False
        return True
    return bool(value == default)


class TaggedFields(_Linked):
    """TAGGED_FIELDS at the end of every struct in a flexible version.

    ``known`` maps tag -> (name, construct, default).  Parsed value: a dict
    with the known fields by name (default when absent) and unknown tags by
    number (raw bytes, kept so that a re-encode is byte-identical).  Known
    fields equal to their default are not written, as Kafka does: some old
    clients (librdkafka 2.0) fail on tagged fields they did not expect.  An
    array's default is declared as a tuple (usually ``()``) and equals any
    list with the same items.
    """

    def __init__(self, known: dict[int, tuple[str, Construct, Any]] | None = None) -> None:
        super().__init__()
        self.flagbuildnone = True  # building may omit the key: no tagged fields
        self.known = dict(sorted((known or {}).items()))
        self.by_name = {name: (tag, con, default) for tag, (name, con, default) in self.known.items()}
        self._shared = {name: shared_default(default) for name, _, default in self.known.values()}
        self.absent = absent_tags({name: default for name, _, default in self.known.values()})

    def _read(self, stream: BinaryIO) -> dict[Any, Any]:
        count = read_uvarint(stream, 32)
        if count == 0 and self.absent is not None:
            return self.absent
        out: dict[Any, Any] = {}
        for name, _, default in self.known.values():
            shared = self._shared[name]
            out[name] = _fresh(default) if shared is None else shared
        last = -1
        for _ in range(count):
            tag = read_uvarint(stream, 32)
            if tag <= last:
                raise ValidationError(f"tagged field {tag} out of order")
            last = tag
            raw = read_exact(stream, read_uvarint(stream, 32))
            if tag in self.known:
                name, con, _default = self.known[tag]
                out[name] = con.parse(raw)
            else:
                out[tag] = raw
        return out

    def _write(self, obj: dict[Any, Any] | None, stream: BinaryIO) -> dict[Any, Any] | None:
        entries: list[tuple[int, bytes]] = []
        for key, value in (obj or {}).items():
            if isinstance(key, int):
                entries.append((key, bytes(value)))
                continue
            if key not in self.by_name:
                raise ValidationError(f"unknown tagged field {key!r}")
            tag, con, default = self.by_name[key]
            if not _is_default(value, default):
                entries.append((tag, con.build(value)))
        entries.sort()
        write_uvarint(len(entries), stream)
        for tag, raw in entries:
            write_uvarint(tag, stream)
            write_uvarint(len(raw), stream)
            stream.write(raw)
        return obj
