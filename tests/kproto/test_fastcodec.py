"""The generated functions of kproto.fastcodec agree with the Construct grammar.

The codec runs the generated functions first and the grammar only when they
fail, so they are trusted only with this proof, at every version of every
message the registry declares (and the request and response headers):

* encoding a generated body is byte for byte the grammar's encoding;
* decoding those bytes gives the grammar's values and consumes them all
  (it declines nothing valid);
* on damaged bytes the fast decoder either fails or agrees with the grammar,
  so the grammar alone decides what is an error.
"""

from __future__ import annotations

import copy
import io
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kproto_strategies import (
    PER_VERSION,
    REQUEST_VERSIONS,
    RESPONSE_VERSIONS,
    ids,
    message_strategy,
    mutate,
    plain,
)

import kproto
from kproto.fastcodec import _container, fast_decoder, fast_encoder
from kproto.headers import REQUEST_HEADER, RESPONSE_HEADER
from kproto.registry import response_message
from kproto.schema import Message

HEADERS = [(REQUEST_HEADER, v) for v in range(3)] + [(RESPONSE_HEADER, v) for v in range(2)]
ALL = REQUEST_VERSIONS + RESPONSE_VERSIONS + HEADERS


def _fast_encode(msg: Message, version: int, body: Any) -> bytes:
    encode = fast_encoder(msg, version)
    assert encode is not None
    buf = bytearray()
    encode(body, buf)
    return bytes(buf)


def _grammar_decode(msg: Message, version: int, data: bytes) -> Any:
    """The grammar's values, or None when it refuses ``data`` or leaves bytes over."""
    con = msg.plain_struct(version)
    stream = io.BytesIO(data)
    try:
        value = con.parse_stream(stream)
    except Exception:
        return None
    return value if stream.tell() == len(data) else None


def test_every_declared_message_has_fast_functions() -> None:
    for msg, version in ALL:
        assert fast_decoder(msg, version) is not None, (msg.name, version)
        assert fast_encoder(msg, version) is not None, (msg.name, version)


@pytest.mark.parametrize(("msg", "version"), ALL, ids=ids(ALL))
@given(data=st.data())
@PER_VERSION
def test_fast_functions_equal_the_grammar(msg: Message, version: int, data: st.DataObject) -> None:
    body = data.draw(message_strategy(msg, version))
    grammar_bytes = bytes(msg.struct(version).build(body))
    assert _fast_encode(msg, version, body) == grammar_bytes
    decode = fast_decoder(msg, version)
    assert decode is not None
    value, pos = decode(grammar_bytes, 0)
    assert pos == len(grammar_bytes)
    assert plain(value) == plain(msg.struct(version).parse(grammar_bytes)) == body


@pytest.mark.parametrize(("msg", "version"), ALL, ids=ids(ALL))
@given(data=st.data())
@PER_VERSION
def test_damaged_bytes_fail_or_agree_with_the_grammar(
    msg: Message, version: int, data: st.DataObject
) -> None:
    body = data.draw(message_strategy(msg, version))
    damaged = bytearray(msg.struct(version).build(body))
    mutate(data.draw, damaged)
    decode = fast_decoder(msg, version)
    assert decode is not None
    try:
        value, pos = decode(bytes(damaged), 0)
    except Exception:
        return  # declined: the codec lets the grammar explain
    if pos != len(damaged):
        return  # the codec declines a frame with bytes left over
    grammar = _grammar_decode(msg, version, bytes(damaged))
    assert grammar is not None, "the fast decoder accepted what the grammar refuses"
    assert plain(value) == plain(grammar)


def _fetch_partition(frame: bytes) -> Any:
    return kproto.decode_response(1, 16, frame).body.responses[0].partitions[0]


def _fetch_frame(tagged: dict[str, Any]) -> bytes:
    partition = {
        "partition_index": 0,
        "error_code": 0,
        "high_watermark": 5,
        "last_stable_offset": 5,
        "log_start_offset": 0,
        "aborted_transactions": None,
        "preferred_read_replica": -1,
        "records": b"",
        "tagged_fields": tagged,
    }
    body = {
        "throttle_time_ms": 0,
        "error_code": 0,
        "session_id": 0,
        "responses": [{"topic_id": bytes(16), "partitions": [partition]}],
    }
    return kproto.encode_response(1, 16, 7, body)


@pytest.mark.parametrize("path", ["fast", "grammar"])
def test_absent_struct_tagged_fields_are_one_shared_read_only_default(
    path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Fetch partition's current_leader / diverging_epoch / snapshot_id are absent from
    nearly every frame: both decoders hand out one shared, read-only default for them."""
    if path == "grammar":
        monkeypatch.setattr("kproto.codec.fast_decoder", lambda *a: None)
    frame = _fetch_frame({})
    first, second = _fetch_partition(frame), _fetch_partition(frame)
    leader = first.tagged_fields["current_leader"]
    assert leader == {"leader_id": -1, "leader_epoch": -1, "tagged_fields": {}}
    assert leader is second.tagged_fields["current_leader"]
    with pytest.raises(TypeError, match="read-only"):
        leader["leader_id"] = 3
    with pytest.raises(TypeError, match="read-only"):
        leader.leader_epoch = 3
    assert leader.leader_id == -1 and second.tagged_fields["current_leader"].leader_id == -1
    changed = copy.deepcopy(leader)  # a copy is an ordinary Container
    changed.leader_id = 3
    assert changed.leader_id == 3 and leader.leader_id == -1


@pytest.mark.parametrize("path", ["fast", "grammar"])
def test_absent_tagged_fields_are_one_shared_read_only_dict(
    path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Fetch partition whose frame carries no tag: both decoders hand out one dict of the
    defaults for every such partition; it refuses changes, so one caller's edit can never
    show up in another decode, and a copy is the caller's own."""
    if path == "grammar":
        monkeypatch.setattr("kproto.codec.fast_decoder", lambda *a: None)
    frame = _fetch_frame({})
    first, second = _fetch_partition(frame), _fetch_partition(frame)
    tags = first.tagged_fields
    assert tags == {
        "diverging_epoch": {"epoch": -1, "end_offset": -1, "tagged_fields": {}},
        "current_leader": {"leader_id": -1, "leader_epoch": -1, "tagged_fields": {}},
        "snapshot_id": {"end_offset": -1, "epoch": -1, "tagged_fields": {}},
    }
    assert tags is second.tagged_fields
    for change in (
        lambda: tags.__setitem__("diverging_epoch", None),
        lambda: tags.pop("snapshot_id"),
        lambda: tags.update(current_leader=None),
        lambda: tags.setdefault(7, b""),
        lambda: tags.clear(),
    ):
        with pytest.raises(TypeError, match="read-only"):
            change()
    with pytest.raises(TypeError, match="read-only"):
        del tags["current_leader"]
    assert second.tagged_fields["current_leader"].leader_id == -1 and len(second.tagged_fields) == 3
    for own in (dict(tags), copy.copy(tags), copy.deepcopy(tags)):
        own["current_leader"] = None
        assert own["current_leader"] is None and tags["current_leader"] is not None
    assert kproto.encode_response(1, 16, 7, kproto.decode_response(1, 16, frame).body) == frame


def test_present_struct_tagged_field_is_decoded_not_shared() -> None:
    frame = _fetch_frame({"current_leader": {"leader_id": 2, "leader_epoch": 9}})
    leader = _fetch_partition(frame).tagged_fields["current_leader"]
    assert (leader.leader_id, leader.leader_epoch) == (2, 9)
    leader.leader_id = 4  # decoded from the frame: the caller's own
    assert leader.leader_id == 4


def test_a_field_name_python_reserves_is_built_from_a_dict() -> None:
    """Structs are built by keywords; a name that cannot be one (none is declared today)
    still decodes, from a dict literal."""
    assert _container([("leader_id", "_v1"), ("tagged_fields", "_tf2")]) == (
        "Container(leader_id=_v1, tagged_fields=_tf2)"
    )
    assert _container([("from", "_v1"), ("to", "_v2")]) == "Container({'from': _v1, 'to': _v2})"


@pytest.mark.parametrize("version", range(4, 19))
@pytest.mark.parametrize(
    "aborted", [None, [], [{"producer_id": 7, "first_offset": 3}]], ids=["null", "empty", "one"]
)
def test_an_array_between_fixed_fields_reads_alike_empty_null_or_not(version: int, aborted: Any) -> None:
    """A Fetch partition's aborted transactions sit between two runs of fixed-width fields:
    empty or null they are read in one unpack with both runs, otherwise one by one."""
    partition = {
        "partition_index": 4,
        "error_code": 0,
        "high_watermark": 5,
        "last_stable_offset": 5,
        "log_start_offset": 1,
        "aborted_transactions": aborted,
        "preferred_read_replica": 2,
        "records": b"abc",
    }
    body = {
        "throttle_time_ms": 1,
        "error_code": 0,
        "session_id": 9,
        "responses": [{"topic": "t", "topic_id": bytes(range(16)), "partitions": [partition, partition]}],
    }
    msg = response_message(1, version)
    data = bytes(msg.struct(version).build(body))
    decode = fast_decoder(msg, version)
    assert decode is not None
    value, pos = decode(data, 0)
    assert pos == len(data)
    assert plain(value) == plain(msg.struct(version).parse(data))
    second = value.responses[0].partitions[1]
    read = second.aborted_transactions
    assert read == aborted if not aborted else [(a.producer_id, a.first_offset) for a in read] == [(7, 3)]
    assert second.get("preferred_read_replica") == (2 if version >= 11 else None)
    assert second.records == b"abc"
