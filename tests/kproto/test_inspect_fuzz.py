"""Whatever the input, the inspector writes JSON lines and never a traceback.

Random and damaged frames go to ``frame``; random cuts, repetitions,
reorderings and losses of a real conversation's segments go to ``pcap``.
Every event must be JSON with either a decoded body or an error object; no
frame may come out twice or out of order; and when the connection's start is
in the capture, every byte of the request stream must be accounted for:
decoded in a frame, or reported as skipped or missing.
"""

from __future__ import annotations

import io
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from inspect_support import (
    Capture,
    TcpConnection,
    api_versions_request,
    inspect,
    metadata_request,
    metadata_response,
)

from kproto.inspect.cli import main


def _frame_events(data: bytes, *args: str) -> list[dict[str, Any]]:
    out = io.StringIO()
    status = main(["frame", "--raw", *args, "-"], out=out, stdin=io.BytesIO(data))
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    assert status == (1 if any("error" in e for e in events) else 0)
    return events


@settings(max_examples=150, deadline=None)
@given(
    st.binary(max_size=200),
    st.sampled_from([[], ["--response", "Metadata:4"], ["--response", "ApiVersions:3"]]),
)
def test_random_bytes_give_events_not_exceptions(data: bytes, args: list[str]) -> None:
    for event in _frame_events(data, *args):
        assert ("body" in event) != ("error" in event)


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_damaged_frames_give_events_not_exceptions(data: st.DataObject) -> None:
    frame = bytearray(metadata_request(3) + api_versions_request(4))
    for _ in range(data.draw(st.integers(1, 4))):
        pos = data.draw(st.integers(0, len(frame) - 1))
        frame[pos] = data.draw(st.integers(0, 255))
    for event in _frame_events(bytes(frame)):
        assert ("body" in event) != ("error" in event)


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_segments_cut_repeated_reordered_or_lost_give_events_not_exceptions(data: st.DataObject) -> None:
    stream = b"".join(metadata_request(i) for i in range(4))
    cuts = sorted(set(data.draw(st.lists(st.integers(1, len(stream) - 1), max_size=8))))
    pieces = [(a, stream[a:b]) for a, b in zip([0, *cuts], [*cuts, len(stream)], strict=True)]
    order = data.draw(st.permutations(range(len(pieces))))
    repeats = data.draw(st.lists(st.integers(0, len(pieces) - 1), max_size=3))
    lost = set(data.draw(st.lists(st.integers(0, len(pieces) - 1), max_size=2)))
    handshake = data.draw(st.booleans())
    cap = Capture()
    conn = TcpConnection(cap, client_port=41000)
    if handshake:
        conn.handshake()
    for index in [*order, *repeats]:
        if index not in lost:
            offset, piece = pieces[index]
            conn.segment(piece, to_broker=True, offset=offset)
    conn.skip(len(stream))
    conn.ack(to_broker=False)
    conn.reply(b"".join(metadata_response(i) for i in range(4)), split=tuple(cuts[:2]))
    status, events = inspect(cap.pcap())
    assert status in (0, 1)
    requests = [e for e in events if e["direction"] == "request"]
    ids = [e["correlation_id"] for e in requests if "body" in e]
    assert ids == sorted(set(ids)) and set(ids) <= {0, 1, 2, 3}  # each once, in order
    if handshake:  # where the stream starts is known: every byte is accounted for
        decoded = sum(len(metadata_request(i)) for i in ids)
        broken = sum(
            e.get("frame_size", 0) + e.get("skipped_bytes", 0) + e.get("missing_bytes", 0)
            for e in requests
            if "body" not in e
        )
        assert decoded + broken == len(stream)
        if not lost:
            assert (ids, status) == ([0, 1, 2, 3], 0)
