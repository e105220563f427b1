"""The Fetch response fast path agrees with the Construct grammar at every version it encodes.

A ``struct`` fast path is only trusted with a property test proving it equals the
grammar on generated inputs.  The parts of ``build_fetch_response`` (regions read
back) must be byte for byte ``kproto.encode_response`` of the same body, with records
never null, the aborted transactions given (an empty list, never null, for none) and
preferred read replica -1.  The
versions are every one kproto's registry declares (the fast path's ``MAX_VERSION``
must reach them): the classic layouts v0-v11 and the flexible v12+, where topics are
ids from v13 and a partition's tagged ``diverging_epoch`` is written when given.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import kproto
from hmb.log.region import FileRegion
from hmb.log.segment import LogSegment
from kproto import ApiKey
from kproto.fetch_fast import FIRST_FLEXIBLE, FIRST_TOPIC_ID, MAX_VERSION, PartitionData, build_fetch_response
from kproto.registry import REQUESTS

INT32 = st.integers(-(2**31), 2**31 - 1)
INT16 = st.integers(-(2**15), 2**15 - 1)
INT64 = st.integers(-(2**63), 2**63 - 1)
TOPIC = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
TOPIC_ID = st.binary(min_size=16, max_size=16)
DECLARED = range(REQUESTS[ApiKey.FETCH].min_version, REQUESTS[ApiKey.FETCH].max_version + 1)


def _records(r: Any) -> bytes:
    if r is None:
        return b""
    return r.read() if isinstance(r, FileRegion) else bytes(r)


def _partition(pd: PartitionData, version: int) -> dict[str, Any]:
    out = {
        "partition_index": pd.partition,
        "error_code": pd.error_code,
        "high_watermark": pd.high_watermark,
        "last_stable_offset": pd.last_stable_offset,
        "log_start_offset": pd.log_start_offset,
        "aborted_transactions": [
            {"producer_id": pid, "first_offset": first} for pid, first in pd.aborted or []
        ],
        "preferred_read_replica": -1,
        "records": _records(pd.records),
    }
    if version >= FIRST_FLEXIBLE and pd.diverging_epoch is not None:
        epoch, end_offset = pd.diverging_epoch
        out["tagged_fields"] = {"diverging_epoch": {"epoch": epoch, "end_offset": end_offset}}
    return out


def _body(
    topics: list[tuple[Any, list[PartitionData]]], throttle: int, error: int, session: int, version: int = 0
) -> dict[str, Any]:
    key = "topic_id" if version >= FIRST_TOPIC_ID else "topic"
    return {
        "throttle_time_ms": throttle,
        "error_code": error,
        "session_id": session,
        "responses": [
            {key: name, "partitions": [_partition(pd, version) for pd in partitions]}
            for name, partitions in topics
        ],
    }


def test_all_versions_match_construct_grammar(tmp_path: Path) -> None:
    seg = LogSegment(tmp_path, 0)
    seg.append(os.urandom(3000), 0)

    @st.composite
    def region(draw: st.DrawFn) -> FileRegion:
        position = draw(st.integers(0, seg.size))
        return FileRegion(seg, position, draw(st.integers(0, seg.size - position)))

    records = st.one_of(st.none(), st.binary(max_size=200), region())
    aborted = st.one_of(st.none(), st.lists(st.tuples(INT64, INT64), max_size=3))
    diverging = st.one_of(st.none(), st.tuples(INT32, INT64))
    partition = st.builds(PartitionData, INT32, INT16, INT64, records, INT64, INT64, aborted, diverging)

    @st.composite
    def versioned(draw: st.DrawFn) -> tuple[int, list[tuple[Any, list[PartitionData]]]]:
        version = draw(st.sampled_from(DECLARED))
        key = TOPIC_ID if version >= FIRST_TOPIC_ID else TOPIC
        return version, draw(st.lists(st.tuples(key, st.lists(partition, max_size=4)), max_size=3))

    @given(versioned(), INT32, INT32, INT16, INT32)
    def prop(drawn: Any, cid: int, throttle: int, error: int, session: int) -> None:
        version, topics = drawn
        given_aborted = [pd.aborted or [] for _name, pds in topics for pd in pds]
        parts = build_fetch_response(
            cid, topics, version, throttle_time_ms=throttle, error_code=error, session_id=session
        )
        joined = b"".join(p.read() if isinstance(p, FileRegion) else p for p in parts)
        assert joined == kproto.encode_response(
            1, version, cid, _body(topics, throttle, error, session, version)
        )
        decoded = kproto.decode_response(1, version, joined).body
        got = [p for t in decoded.responses for p in t.partitions]
        for p, expected in zip(got, given_aborted, strict=True):
            assert p.records is not None
            if version >= 4:  # never null: an empty list for none
                assert [(a.producer_id, a.first_offset) for a in p.aborted_transactions] == expected

    try:
        prop()
    finally:
        seg.close()


def test_every_declared_version_is_encoded() -> None:
    """Each version kproto declares, explicitly (the property test draws them at random)."""
    assert MAX_VERSION == DECLARED[-1], "the fast path encodes every version kproto declares"
    for version in DECLARED:
        topic = b"\x07" * 16 if version >= FIRST_TOPIC_ID else "t"
        topics = [(topic, [PartitionData(0, 0, 5, b"")])]
        parts = build_fetch_response(3, topics, version)
        assert parts == [kproto.encode_response(1, version, 3, _body(topics, 0, 0, 0, version))], version


def test_the_wrong_kind_of_topic_or_an_unknown_version_is_refused() -> None:
    """Names up to v12, 16-byte ids from v13: the other kind is a caller's bug, never sent."""
    partitions = [PartitionData(0, 0, 5, b"")]
    for version, topic in (
        (FIRST_TOPIC_ID - 1, b"\x07" * 16),
        (FIRST_TOPIC_ID, "t"),
        (FIRST_TOPIC_ID, b"short"),
    ):
        with pytest.raises(ValueError):
            build_fetch_response(3, [(topic, partitions)], version)
    with pytest.raises(ValueError):
        build_fetch_response(3, [("t", partitions)], 5)  # a name at v5 is fine ...
        build_fetch_response(3, [(b"\x07" * 16, partitions)], 5)  # ... an id is not
    with pytest.raises(ValueError):
        build_fetch_response(3, [], MAX_VERSION + 1)
