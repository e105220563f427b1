"""The Fetch response fast path against kafka-python's JSON-driven codec, an independent peer.

``tests/hmb/test_modern_fetch_response.py`` proves ``build_fetch_response`` equal to
kproto's own grammar; here its frames must be, byte for byte, the frames kafka-python 3
builds from Apache's message specs for the same values, at every version kproto
declares: the classic v0-v11 and the flexible v12+ above all (response header v1,
compact lengths, tagged-field sections, topic ids from v13, the tagged
``diverging_epoch`` when given and nothing for the tagged fields left at their
defaults).  kafka-python must also read the fast path's frames back to those values.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from kafka_python_json import decode_theirs, from_theirs, to_theirs

from kproto import ApiKey
from kproto.fetch_fast import FIRST_FLEXIBLE, FIRST_TOPIC_ID, PartitionData, build_fetch_response
from kproto.messages import fetch
from kproto.registry import REQUESTS

INT16 = st.integers(-(2**15), 2**15 - 1)
INT32 = st.integers(-(2**31), 2**31 - 1)
INT64 = st.integers(-(2**63), 2**63 - 1)
NAME = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
TOPIC_ID = st.binary(min_size=16, max_size=16)
DECLARED = range(REQUESTS[ApiKey.FETCH].min_version, REQUESTS[ApiKey.FETCH].max_version + 1)

partition = st.builds(
    PartitionData,
    INT32,
    INT16,
    INT64,
    st.binary(max_size=64),
    INT64,
    INT64,
    st.one_of(st.none(), st.lists(st.tuples(INT64, INT64), max_size=3)),
    st.one_of(st.none(), st.tuples(INT32, INT64)),
)


@st.composite
def responses(draw: st.DrawFn) -> tuple[int, list[tuple[Any, list[PartitionData]]]]:
    version = draw(st.sampled_from(DECLARED))
    key = TOPIC_ID if version >= FIRST_TOPIC_ID else NAME
    return version, draw(st.lists(st.tuples(key, st.lists(partition, max_size=3)), max_size=3))


def _body(topics: list[tuple[Any, list[PartitionData]]], version: int, throttle: int, session: int) -> dict:
    def one(pd: PartitionData) -> dict[str, Any]:
        tagged = {}
        if version >= FIRST_FLEXIBLE and pd.diverging_epoch is not None:
            tagged["diverging_epoch"] = {"epoch": pd.diverging_epoch[0], "end_offset": pd.diverging_epoch[1]}
        return {
            "partition_index": pd.partition,
            "error_code": pd.error_code,
            "high_watermark": pd.high_watermark,
            "last_stable_offset": pd.last_stable_offset,
            "log_start_offset": pd.log_start_offset,
            "aborted_transactions": [{"producer_id": p, "first_offset": f} for p, f in pd.aborted or []],
            "preferred_read_replica": -1,
            "records": pd.records,
            "tagged_fields": tagged,
        }

    key = "topic_id" if version >= FIRST_TOPIC_ID else "topic"
    return {
        "throttle_time_ms": throttle,
        "error_code": 0,
        "session_id": session,
        "responses": [{key: t, "partitions": [one(pd) for pd in pds]} for t, pds in topics],
    }


@settings(max_examples=300)
@given(responses(), INT32, INT32, INT32)
def test_responses_are_kafka_pythons_bytes(drawn: Any, cid: int, throttle: int, session: int) -> None:
    version, topics = drawn
    theirs = to_theirs(fetch.RESPONSE, version, _body(topics, version, throttle, session))
    theirs.with_header(correlation_id=cid)
    expected = bytes(theirs.encode(header=True, framed=True))
    ours = b"".join(build_fetch_response(cid, topics, version, throttle_time_ms=throttle, session_id=session))
    assert ours == expected
    read = from_theirs(fetch.RESPONSE, version, decode_theirs(fetch.RESPONSE, version, ours))
    key = "topic_id" if version >= FIRST_TOPIC_ID else "topic"
    assert [t[key] for t in read["responses"]] == [
        bytes(t) if version >= FIRST_TOPIC_ID else t for t, _ in topics
    ]
    got = [p for t in read["responses"] for p in t["partitions"]]
    given_partitions = [pd for _, pds in topics for pd in pds]
    assert [(p["partition_index"], bytes(p["records"])) for p in got] == [
        (pd.partition, pd.records) for pd in given_partitions
    ]
    if version >= FIRST_FLEXIBLE:
        assert [
            (
                p["tagged_fields"]["diverging_epoch"]["epoch"],
                p["tagged_fields"]["diverging_epoch"]["end_offset"],
            )
            for p in got
        ] == [pd.diverging_epoch or (-1, -1) for pd in given_partitions]
