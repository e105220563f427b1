"""Whatever the bytes, decoding raises only kproto's own error type.

Random frames and mutations of valid frames (bit flips, truncation,
insertion, deletion, forged lengths) go to every request and response
decoder.  The size prefix is re-computed after mutation so that the
mutated bytes reach the body grammar instead of stopping at the prefix.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kproto_strategies import PER_VERSION, REQUEST_VERSIONS, RESPONSE_VERSIONS, ids, message_strategy

import kproto
from kproto.schema import Message


def _reframe(payload: bytes) -> bytes:
    return len(payload).to_bytes(4, "big") + payload


@st.composite
def mutated(draw: st.DrawFn, payload: bytes) -> bytes:
    data = bytearray(payload)
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["flip", "truncate", "insert", "delete", "big_length"]))
        pos = draw(st.integers(0, max(0, len(data) - 1)))
        if op == "flip" and data:
            data[pos] ^= 1 << draw(st.integers(0, 7))
        elif op == "truncate":
            del data[pos:]
        elif op == "insert":
            data[pos:pos] = draw(st.binary(min_size=1, max_size=8))
        elif op == "delete" and data:
            del data[pos : pos + draw(st.integers(1, 8))]
        elif op == "big_length" and len(data) >= pos + 4:
            data[pos : pos + 4] = draw(
                st.sampled_from([b"\x7f\xff\xff\xff", b"\xff\xff\xff\xfe", b"\x80\x00\x00\x00"])
            )
    return bytes(data)


def _decode_request_or_kproto_error(frame: bytes) -> None:
    try:
        kproto.decode_request(frame)
    except kproto.KprotoError:
        pass


@given(st.binary(max_size=200))
def test_random_bytes_never_escape_as_anything_but_kproto_errors(data: bytes) -> None:
    _decode_request_or_kproto_error(data)
    _decode_request_or_kproto_error(_reframe(data))
    for api_key, version in [(0, 0), (1, 0), (3, 0), (9, 1)]:
        try:
            kproto.decode_response(api_key, version, _reframe(data))
        except kproto.KprotoError:
            pass


@pytest.mark.parametrize(("msg", "version"), REQUEST_VERSIONS, ids=ids(REQUEST_VERSIONS))
@given(data=st.data())
@PER_VERSION
def test_mutated_requests(msg: Message, version: int, data: st.DataObject) -> None:
    body = data.draw(message_strategy(msg, version))
    frame = kproto.encode_request(msg.api_key, version, 1, body, client_id="fuzz")
    # keep api key and version intact half of the time so the body grammar is reached
    payload = frame[4:]
    mutant = data.draw(mutated(payload[8:]))
    head = payload[:8] if data.draw(st.booleans()) else data.draw(mutated(payload[:8]))
    _decode_request_or_kproto_error(_reframe(head + mutant))


@pytest.mark.parametrize(("msg", "version"), RESPONSE_VERSIONS, ids=ids(RESPONSE_VERSIONS))
@given(data=st.data())
@PER_VERSION
def test_mutated_responses(msg: Message, version: int, data: st.DataObject) -> None:
    body = data.draw(message_strategy(msg, version))
    frame = kproto.encode_response(msg.api_key, version, 1, body)
    try:
        kproto.decode_response(msg.api_key, version, _reframe(data.draw(mutated(frame[4:]))))
    except kproto.KprotoError:
        pass


@given(st.lists(st.binary(max_size=64), max_size=20), st.integers(0, 300))
def test_frame_decoder_with_arbitrary_chunks(chunks: list[bytes], max_size: int) -> None:
    dec = kproto.FrameDecoder(max_size=max_size)
    try:
        for chunk in chunks:
            dec.feed(chunk)
            while (frame := dec.next_frame()) is not None:
                assert len(frame) - 4 == int.from_bytes(frame[:4], "big") <= max_size
    except kproto.KprotoError:
        pass
