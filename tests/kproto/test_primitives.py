"""Kafka's primitive types: known vectors from Kafka's own tests, round trips,
and the refusals that keep a malformed frame from being half-read."""

from __future__ import annotations

import io

import pytest
from construct import ConstructError, Struct
from hypothesis import given
from hypothesis import strategies as st

from kproto import primitives as p

# (value, bytes) pairs from Kafka's ByteUtilsTest (zig-zag varints).
VARINT_VECTORS = [
    (0, "00"),
    (-1, "01"),
    (1, "02"),
    (63, "7e"),
    (-64, "7f"),
    (64, "8001"),
    (-65, "8101"),
    (8191, "fe7f"),
    (-8192, "ff7f"),
    (8192, "808001"),
    (-8193, "818001"),
    (2**31 - 1, "feffffff0f"),
    (-(2**31), "ffffffff0f"),
]


@pytest.mark.parametrize(("value", "hexed"), VARINT_VECTORS)
def test_varint_matches_kafka_vectors(value: int, hexed: str) -> None:
    assert p.Varint.build(value).hex() == hexed
    assert p.Varint.parse(bytes.fromhex(hexed)) == value


def test_uvarint_and_varlong_vectors() -> None:
    assert p.UVarint.build(300).hex() == "ac02"
    assert p.UVarint.build(2**32 - 1).hex() == "ffffffff0f"
    assert p.Varlong.build(-(2**63)).hex() == "ffffffffffffffffff01"
    assert p.Varlong.parse(bytes.fromhex("feffffffffffffffff01")) == 2**63 - 1


@pytest.mark.parametrize("data", ["ffffffffff7f", "8080808080808080808001", "80"])
def test_overlong_or_truncated_varint_is_refused(data: str) -> None:
    with pytest.raises(ConstructError):
        p.UVarint.parse(bytes.fromhex(data))


@given(st.integers(-(2**31), 2**31 - 1))
def test_varint_round_trip(n: int) -> None:
    assert p.Varint.parse(p.Varint.build(n)) == n


@given(st.integers(-(2**63), 2**63 - 1))
def test_varlong_round_trip(n: int) -> None:
    assert p.Varlong.parse(p.Varlong.build(n)) == n


def test_varint_out_of_range_is_refused() -> None:
    with pytest.raises(ConstructError):
        p.Varint.build(2**31)


def test_string_flavours() -> None:
    assert p.KString().build("ab").hex() == "00026162"
    assert p.KString(nullable=True).build(None).hex() == "ffff"
    assert p.KString(compact=True).build("").hex() == "01"
    assert p.KString(nullable=True, compact=True).build(None).hex() == "00"
    assert p.KString(nullable=True, compact=True).parse(b"\x00") is None
    with pytest.raises(ConstructError):
        p.KString().build(None)  # a non-nullable string refuses null
    with pytest.raises(ConstructError):
        p.KString().parse(b"\xff\xff")  # ... and so does its reader
    with pytest.raises(ConstructError):
        p.KString().parse(b"\x00\x02\xff\xfe")  # not UTF-8


def test_bytes_flavours() -> None:
    assert p.KBytes(nullable=True).build(None).hex() == "ffffffff"
    assert p.KBytes().build(b"\x01").hex() == "0000000101"
    assert p.KBytes(compact=True, nullable=True).parse(b"\x03ab") == b"ab"
    with pytest.raises(ConstructError):
        p.KBytes().parse(b"\x00\x00\x00\x05ab")  # announces more than there is


@given(st.text(), st.booleans())
def test_string_round_trip(s: str, compact: bool) -> None:
    con = p.KString(compact=compact)
    assert con.parse(con.build(s)) == s


@given(st.lists(st.integers(-(2**31), 2**31 - 1)) | st.none(), st.booleans())
def test_nullable_array_round_trip_interpreted_and_compiled(items: list[int] | None, compact: bool) -> None:
    con = Struct("a" / p.KArray(p.Int32, nullable=True, compact=compact))
    data = con.build({"a": items})
    assert con.compile().build({"a": items}) == data
    assert con.parse(data).a == items
    assert con.compile().parse(data).a == items


def test_array_negative_count_is_refused() -> None:
    con = p.KArray(p.Int32)
    with pytest.raises(ConstructError):
        con.parse(b"\xff\xff\xff\xfe")
    with pytest.raises(ConstructError):
        con.parse(b"\xff\xff\xff\xff")  # -1 is null, and this array is not nullable


def test_huge_array_count_fails_fast_at_end_of_input() -> None:
    con = Struct("a" / p.KArray(p.Int32)).compile()
    with pytest.raises(Exception):  # noqa: B017 - compiled code raises struct.error here
        con.parse(b"\x7f\xff\xff\xff\x00\x00\x00\x01")


def test_tagged_fields_keep_unknown_tags_and_omit_defaults() -> None:
    tagged = p.TaggedFields({0: ("name", p.KString(compact=True), "dflt"), 3: ("n", p.Int32, 0)})
    assert tagged.build({"name": "dflt", "n": 0}).hex() == "00"  # defaults are not written
    data = tagged.build({"name": "x", 7: b"\x01\x02"})
    assert data.hex() == "02" + "00" + "02" + "0278" + "07" + "02" + "0102"
    assert tagged.parse(data) == {"name": "x", "n": 0, 7: b"\x01\x02"}
    with pytest.raises(ConstructError):
        tagged.parse(bytes.fromhex("0207000000"))  # tags must ascend


def test_read_exact_refuses_short_reads() -> None:
    with pytest.raises(ConstructError):
        p.read_exact(io.BytesIO(b"ab"), 3)
