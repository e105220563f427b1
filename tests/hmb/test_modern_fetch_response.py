"""The Fetch response fast path agrees with the Construct grammar at every version it encodes.

A ``struct`` fast path is only trusted with a property test proving it equals the
grammar on generated inputs.  The parts of ``build_fetch_response`` (regions read
back) must be byte for byte ``kproto.encode_response`` of the same body, with records
never null, the aborted transactions given (an empty list, never null, for none) and
preferred read replica -1.  The
versions come from kproto's registry, up to the fast path's ``MAX_VERSION`` (v0-v11,
the classic layouts); the flexible versions kproto declares above it are refused
with ``ValueError`` until the fast path encodes them (checked here too).
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
from kproto.fetch_fast import MAX_VERSION, PartitionData, build_fetch_response
from kproto.registry import REQUESTS

INT32 = st.integers(-(2**31), 2**31 - 1)
INT16 = st.integers(-(2**15), 2**15 - 1)
INT64 = st.integers(-(2**63), 2**63 - 1)
TOPIC = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
DECLARED = range(REQUESTS[ApiKey.FETCH].min_version, min(REQUESTS[ApiKey.FETCH].max_version, MAX_VERSION) + 1)
BEYOND = range(MAX_VERSION + 1, REQUESTS[ApiKey.FETCH].max_version + 1)


def _records(r: Any) -> bytes:
    if r is None:
        return b""
    return r.read() if isinstance(r, FileRegion) else bytes(r)


def _body(
    topics: list[tuple[str, list[PartitionData]]], throttle: int, error: int, session: int
) -> dict[str, Any]:
    return {
        "throttle_time_ms": throttle,
        "error_code": error,
        "session_id": session,
        "responses": [
            {
                "topic": name,
                "partitions": [
                    {
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
                    for pd in partitions
                ],
            }
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
    partition = st.builds(PartitionData, INT32, INT16, INT64, records, INT64, INT64, aborted)
    topics = st.lists(st.tuples(TOPIC, st.lists(partition, max_size=4)), max_size=3)

    @given(st.sampled_from(DECLARED), INT32, topics, INT32, INT16, INT32)
    def prop(version: int, cid: int, topics: Any, throttle: int, error: int, session: int) -> None:
        given_aborted = [pd.aborted or [] for _name, pds in topics for pd in pds]
        parts = build_fetch_response(
            cid, topics, version, throttle_time_ms=throttle, error_code=error, session_id=session
        )
        joined = b"".join(p.read() if isinstance(p, FileRegion) else p for p in parts)
        assert joined == kproto.encode_response(1, version, cid, _body(topics, throttle, error, session))
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
    for version in DECLARED:
        body = _body([("t", [PartitionData(0, 0, 5, b"")])], 0, 0, 0)
        parts = build_fetch_response(3, [("t", [PartitionData(0, 0, 5, b"")])], version)
        assert parts == [kproto.encode_response(1, version, 3, body)], version


def test_declared_versions_beyond_the_fast_path_are_refused() -> None:
    """Fetch v12+ (flexible) is declared by the grammar; the fast path refuses it."""
    for version in BEYOND:
        with pytest.raises(ValueError):
            build_fetch_response(3, [("t", [PartitionData(0, 0, 5, b"")])], version)
