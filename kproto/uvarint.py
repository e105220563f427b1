"""Unsigned varints as bytes, for the struct fast paths that frame flexible messages.

Flexible versions prefix compact strings, arrays and tagged fields with an
unsigned varint (seven bits a byte, low group first, the high bit set on
every byte but the last).  The fast paths (:mod:`kproto.produce_fast`,
:mod:`kproto.fetch_fast`) write mostly small lengths, so the values below
128 come from a table of one-byte strings.
"""

from __future__ import annotations

_ONE_BYTE = [bytes((n,)) for n in range(0x80)]


def uvarint_bytes(value: int) -> bytes:
    """``value`` (>= 0) as an unsigned varint."""
    if value < 0x80:
        return _ONE_BYTE[value]
    raw = bytearray()
    while value > 0x7F:
        raw.append((value & 0x7F) | 0x80)
        value >>= 7
    raw.append(value)
    return bytes(raw)
