"""The entry layout (kproto.records.entry) agrees with the full record codecs.

What the log reads from entry headers alone -- last offset, magic, largest
timestamp, producer fields, size -- must be what decoding the records says, for
every message format and codec.  The reference is the codecs' own readers
(:func:`kproto.records.read_records`, :class:`kproto.records.RecordBatchHeader`).
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kproto.records import (
    Compression,
    RecordBatchBuilder,
    RecordBatchHeader,
    assign_batches,
    build_message_set,
    read_records,
)
from kproto.records.default import HEADER
from kproto.records.entry import (
    ENTRY_HEAD,
    LOG_OVERHEAD,
    PEEK,
    V2_HEADER_SIZE,
    check_entry,
    entry_size,
    last_offset,
    max_magic,
    producer_fields,
)

TS = st.integers(0, 2**41)
VALUE = st.one_of(st.none(), st.binary(max_size=20))
KEY = st.one_of(st.none(), st.binary(max_size=8))


@st.composite
def entry(draw: st.DrawFn) -> tuple[int, bytes]:
    """One entry of a random magic and codec, numbered from 0: ``(magic, bytes)``."""
    magic = draw(st.sampled_from([0, 1, 2]))
    records = draw(st.lists(st.tuples(KEY, VALUE, TS), min_size=1, max_size=5))
    if magic == 2:
        codec = draw(st.sampled_from([Compression.NONE, Compression.GZIP]))
        pid = draw(st.sampled_from([-1, 7]))
        b = RecordBatchBuilder(codec, pid, 0 if pid >= 0 else -1, 3 if pid >= 0 else -1)
        for key, value, ts in records:
            b.append(key, value, ts)
        return magic, b.build()
    codec = draw(st.sampled_from([Compression.NONE, Compression.GZIP]))
    return magic, build_message_set(records, magic=magic, compression=codec)


@given(st.lists(entry(), min_size=1, max_size=4), st.integers(0, 2**40))
def test_headers_say_what_the_records_say(entries: list[tuple[int, bytes]], base: int) -> None:
    data = bytes(assign_batches(b"".join(e for _, e in entries), base).buf)
    pos = 0
    for magic, _ in entries:
        # a magic-0/1 set may be several entries (uncompressed): walk them one by one
        while pos < len(data) and data[pos + 16] == magic:
            size = entry_size(data, pos)
            one = data[pos : pos + size]
            assert ENTRY_HEAD.unpack_from(one)[1] + LOG_OVERHEAD == size
            records = read_records(one, allow_partial_tail=False)
            found = check_entry(one)
            assert not isinstance(found, str)
            last, got_magic, max_ts = found
            assert (last, got_magic) == (records[-1].offset, magic)
            assert last_offset(data[pos : pos + PEEK]) == last
            assert check_entry(one, validate=False) == found
            assert max_ts == (-1 if magic == 0 else max(r.timestamp for r in records))
            if magic == 2:
                header = RecordBatchHeader(*HEADER.unpack_from(one))
                assert producer_fields(one[:V2_HEADER_SIZE]) == (
                    header.producer_id,
                    header.producer_epoch,
                    header.base_sequence,
                    header.record_count,
                )
            pos += size
            if magic == 2:
                break
    assert pos == len(data)
    assert max_magic(data) == max(m for m, _ in entries)


def test_bad_entries_say_why() -> None:
    good = build_message_set([(None, b"v")])
    assert check_entry(bytes(12) + bytes(5)) == "entry size 0 too small"
    bad_magic = bytearray(good)
    bad_magic[16] = 7
    assert str(check_entry(bad_magic)).startswith("bad magic 7")
    flipped = bytearray(good)
    flipped[-1] ^= 1
    assert check_entry(flipped) == "CRC mismatch"
    assert check_entry(flipped, validate=False) != "CRC mismatch"
    builder = RecordBatchBuilder()
    builder.append(None, b"v", 1)
    batch = bytearray(builder.build())
    batch[-1] ^= 1
    assert check_entry(batch) == "CRC-32C mismatch"


def test_entry_size_of_a_short_buffer_is_zero() -> None:
    assert entry_size(b"\0" * 11) == 0
    assert entry_size(ENTRY_HEAD.pack(5, -3)) == LOG_OVERHEAD  # a negative size counts as none
