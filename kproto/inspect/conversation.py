"""A captured Kafka conversation: TCP connections to frames, frames to paired events.

Rules of this module:

* A connection is identified by its client and broker endpoints; the broker
  is the side whose port is one of the ports being watched.  Bytes to the
  broker are requests, bytes from it responses.
* Each direction is split into frames by their size prefixes.  When the
  stream's start is unknown (the capture began mid-connection, or lost
  bytes) the splitter *resynchronises*: it looks for the first position
  where a whole frame decodes -- a request kproto knows, or a response
  whose correlation id answers a request seen on this connection -- and
  reports the bytes before it as skipped.
* A response is decoded with the api key and version of the request with
  the same correlation id on the same connection, as Kafka's protocol
  requires; a response no captured request explains is reported, not
  guessed at.  Produce requests with ``acks=0`` expect no response.
"""

from __future__ import annotations

import itertools
import struct
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import kproto
from kproto.frames import DEFAULT_MAX_FRAME_SIZE, frame_size
from kproto.inspect.pcap import Segment
from kproto.inspect.render import (
    QUOTED_FRAME_BYTES,
    Options,
    api_name,
    error_object,
    request_event,
    response_event,
)
from kproto.inspect.stream import Chunk, TcpStream

__all__ = ["Conversation", "FrameSplitter", "inspect_capture"]

_REQUEST_HEAD = struct.Struct(">ihhi")  # size, api key, version, correlation id
_RESPONSE_HEAD = struct.Struct(">ii")  # size, correlation id
_SMALLEST_REQUEST = 10  # api key, version, correlation id, client id length
_SMALLEST_RESPONSE = 4  # correlation id

#: Judges a candidate frame while resynchronising: True (a frame starts here),
#: False (not here), None (cannot tell before more bytes arrive).
Candidate = Callable[[bytearray, int], bool | None]


@dataclass
class Piece:
    """What a splitter hands out: a whole ``frame``, or bytes it could not make a frame of.

    ``skipped``: bytes of the capture not decoded; ``missing``: bytes the
    capture does not hold.  A frame that lost bytes comes as its captured
    start (``frame``) with both counts and an ``error``.
    """

    frame: bytes = b""
    skipped: int = 0
    missing: int = 0
    error: dict[str, Any] | None = None


def _missing_bytes(piece: Piece) -> Piece:
    message = f"{piece.missing} bytes of this connection are not in the capture"
    piece.error = error_object(kind="MissingBytes", message=message)
    return piece


@dataclass
class FrameSplitter:
    """Size-prefixed frames out of one direction's bytes, resynchronising after unknown starts."""

    candidate: Candidate
    hopeless: Callable[[], bool] = lambda: False  # no frame can be found now: skip without looking
    synced: bool = True
    max_size: int = DEFAULT_MAX_FRAME_SIZE
    _buf: bytearray = field(default_factory=bytearray)
    _broken: Piece | None = None  # a frame that lost bytes, reported when its end has passed
    _drop: int = 0  # bytes still to come of ``_broken``
    _skipped: int = 0  # bytes skipped while looking for a frame start, not reported yet
    _why_unsynced: str = ""

    def lose_sync(self, why: str) -> None:
        self.synced = False
        self._why_unsynced = why

    def feed(self, data: bytes) -> list[Piece]:
        out: list[Piece] = []
        if self._broken is not None:
            dropped = min(self._drop, len(data))
            self._drop -= dropped
            self._broken.skipped += dropped
            data = data[dropped:]
            if not self._drop:
                out.append(_missing_bytes(self._broken))
                self._broken = None
        self._buf += data
        return out + self._split(final=False)

    def gap(self, missing: int) -> list[Piece]:
        """``missing`` bytes are not in the capture.

        Inside a frame whose size is known, the frame is reported broken once
        its end has passed and the splitter stays in step (the next frame
        starts where this one ends); anywhere else it has to resynchronise.
        """
        if self._broken is not None:
            inside = min(missing, self._drop)
            self._broken.missing += inside
            self._drop -= inside
            missing -= inside
            if self._drop:
                return []
            out = [_missing_bytes(self._broken)]
            self._broken = None
            if not missing:
                return out
            self.lose_sync("bytes before it are missing from the capture")
            return [*out, _missing_bytes(Piece(missing=missing))]
        head = bytes(self._buf)
        self._buf.clear()
        if not self.synced:
            self._skipped += len(head)
            return [_missing_bytes(Piece(missing=missing))]
        if len(head) >= 4 and 0 < missing <= 4 + _size(head) - len(head):
            self._drop = 4 + _size(head) - len(head) - missing
            self._broken = Piece(frame=head, skipped=len(head), missing=missing)
            return self.feed(b"") if not self._drop else []
        self.lose_sync("bytes before it are missing from the capture")
        return [_missing_bytes(Piece(frame=head, skipped=len(head), missing=missing))]

    def finish(self) -> list[Piece]:
        """At the end of the capture: the rest of the buffer, reported."""
        out = self._split(final=True)
        if self._broken is not None:
            out.append(_missing_bytes(self._broken))
            self._broken = None
        if self._buf or self._skipped:
            if self.synced and len(self._buf) >= 4:
                message = (
                    f"the capture ends {len(self._buf)} bytes into a frame of {4 + _size(self._buf)} bytes"
                )
                kind = "TruncatedFrame"
            elif self.synced:
                message, kind = (
                    f"the capture ends {len(self._buf)} bytes into a size prefix",
                    "TruncatedFrame",
                )
            else:
                message, kind = f"no frame found to resynchronise on ({self._why_unsynced})", "Unsynchronised"
            error = error_object(kind=kind, message=message)
            skipped = len(self._buf) + (0 if self.synced else self._skipped)
            out.append(Piece(frame=bytes(self._buf) if self.synced else b"", skipped=skipped, error=error))
            self._buf.clear()
            self._skipped = 0
        return out

    def _split(self, final: bool) -> list[Piece]:
        out: list[Piece] = []
        while self._buf:
            if not self.synced and not self._resync(out, final):
                break
            if len(self._buf) < 4:
                break
            try:
                size = frame_size(self._buf, self.max_size)
            except kproto.KprotoError as exc:
                self.lose_sync(f"after a bad size prefix: {exc}")
                out.append(Piece(skipped=4, error=error_object(exc)))
                del self._buf[:4]
                continue
            if len(self._buf) < 4 + size:
                break
            out.append(Piece(frame=bytes(self._buf[: 4 + size])))
            del self._buf[: 4 + size]
        return out

    def _resync(self, out: list[Piece], final: bool) -> bool:
        """Find a frame start; skip what is before it.  False: wait for more bytes.

        Skipped bytes are counted until the frame is found (or the capture
        ends) and then reported once.
        """
        if self.hopeless():
            self._skip(len(self._buf) if final else max(0, len(self._buf) - 3))
            return False
        for pos in range(len(self._buf) - 3):
            verdict = self.candidate(self._buf, pos)
            if verdict is None and not final:
                self._skip(pos)
                return False
            if verdict:
                self._skip(pos)
                self.synced = True
                if self._skipped:
                    message = (
                        f"{self._skipped} bytes skipped before a frame could be found: {self._why_unsynced}"
                    )
                    out.append(
                        Piece(
                            skipped=self._skipped, error=error_object(kind="Unsynchronised", message=message)
                        )
                    )
                    self._skipped = 0
                return True
        if not final:
            self._skip(max(0, len(self._buf) - 3))
        return False

    def _skip(self, n: int) -> None:
        self._skipped += n
        del self._buf[:n]


def _size(buf: bytes | bytearray) -> int:
    return int.from_bytes(buf[:4], "big", signed=True)


@dataclass
class _Pending:
    api_key: int
    version: int
    ts: float


@dataclass
class _Direction:
    stream: TcpStream
    splitter: FrameSplitter
    src: str
    dst: str


class Conversation:
    """One TCP connection between a client and a broker: segments in, events out."""

    def __init__(self, number: int, client: str, broker: str, opts: Options) -> None:
        self.number = number
        self.opts = opts
        self.pending: dict[int, _Pending] = {}
        self._versions = kproto.supported_versions()
        self.requests = _Direction(TcpStream(), FrameSplitter(self._request_candidate), client, broker)
        self.responses = _Direction(
            TcpStream(), FrameSplitter(self._response_candidate, lambda: not self.pending), broker, client
        )

    def is_new_connection(self, syn_seq: int) -> bool:
        """Whether a client's SYN starts another connection on this pair of ports (not a SYN resent)."""
        stream = self.requests.stream
        return stream.next_seq is not None and stream.first_seq != (syn_seq + 1) % (1 << 32)

    # ------------------------------------------------------------ resynchronising

    def _request_candidate(self, buf: bytearray, pos: int) -> bool | None:
        if len(buf) - pos < _REQUEST_HEAD.size:
            return None
        size, api_key, version, correlation_id = _REQUEST_HEAD.unpack_from(buf, pos)
        low_high = self._versions.get(api_key)
        if low_high is None or not low_high[0] <= version <= low_high[1]:
            return False
        if correlation_id < 0 or not _SMALLEST_REQUEST <= size <= DEFAULT_MAX_FRAME_SIZE:
            return False
        if len(buf) - pos < 4 + size:
            return None
        try:
            kproto.decode_request(bytes(buf[pos : pos + 4 + size]))
        except kproto.KprotoError:
            return False
        return True

    def _response_candidate(self, buf: bytearray, pos: int) -> bool | None:
        if len(buf) - pos < _RESPONSE_HEAD.size:
            return None
        size, correlation_id = _RESPONSE_HEAD.unpack_from(buf, pos)
        pending = self.pending.get(correlation_id)
        if pending is None or not _SMALLEST_RESPONSE <= size <= DEFAULT_MAX_FRAME_SIZE:
            return False
        if len(buf) - pos < 4 + size:
            return None
        try:
            kproto.decode_response(pending.api_key, pending.version, bytes(buf[pos : pos + 4 + size]))
        except kproto.KprotoError:
            return False
        return True

    # ------------------------------------------------------------ events

    def segment(self, seg: Segment, to_broker: bool) -> Iterator[dict[str, Any]]:
        side, other = (self.requests, self.responses) if to_broker else (self.responses, self.requests)
        if seg.syn:
            side.stream.syn(seg.seq)
        chunks = side.stream.segment(seg.seq, seg.payload, seg.missing)
        if side.stream.started_mid_stream:
            side.splitter.lose_sync("the capture starts in the middle of this connection")
            side.stream.started_mid_stream = False
        yield from self._chunks(side, chunks, seg.ts, to_broker)
        if seg.fin:
            side.stream.fin(seg.seq + len(seg.payload) + seg.missing)
        if seg.ack is not None:
            yield from self._chunks(other, other.stream.acknowledged(seg.ack), seg.ts, not to_broker)

    def finish(self, ts: float) -> Iterator[dict[str, Any]]:
        for side, to_broker in ((self.requests, True), (self.responses, False)):
            yield from self._chunks(side, side.stream.finish(), ts, to_broker)
            yield from self._pieces(side, side.splitter.finish(), ts, to_broker)

    def _chunks(
        self, side: _Direction, chunks: list[Chunk], ts: float, to_broker: bool
    ) -> Iterator[dict[str, Any]]:
        for chunk in chunks:
            pieces = side.splitter.gap(chunk.missing) if chunk.missing else side.splitter.feed(chunk.data)
            yield from self._pieces(side, pieces, ts, to_broker)

    def _pieces(
        self, side: _Direction, pieces: list[Piece], ts: float, to_broker: bool
    ) -> Iterator[dict[str, Any]]:
        for piece in pieces:
            if piece.error is not None:
                yield self._event(side, ts, self._broken(piece, to_broker, ts))
            elif to_broker:
                yield self._event(side, ts, self._request(piece.frame, ts))
            else:
                yield self._event(side, ts, self._response(piece.frame, ts))

    def _broken(self, piece: Piece, to_broker: bool, ts: float) -> dict[str, Any]:
        """Skipped bytes, or a frame that lost bytes: what its start still tells, and why it stops."""
        event: dict[str, Any] = {"direction": "request" if to_broker else "response"}
        head = piece.frame
        if to_broker and len(head) >= _REQUEST_HEAD.size:
            _size, api_key, version, correlation_id = _REQUEST_HEAD.unpack_from(head)
            event.update(
                api=api_name(api_key), api_key=api_key, version=version, correlation_id=correlation_id
            )
            self.pending[correlation_id] = _Pending(api_key, version, ts)
        elif not to_broker and len(head) >= _RESPONSE_HEAD.size:
            correlation_id = _RESPONSE_HEAD.unpack_from(head)[1]
            pending = self.pending.pop(correlation_id, None)
            if pending is not None:
                event.update(api=api_name(pending.api_key), api_key=pending.api_key, version=pending.version)
            event["correlation_id"] = correlation_id
        event["skipped_bytes"] = piece.skipped
        if piece.missing:
            event["missing_bytes"] = piece.missing
        event["error"] = piece.error
        return event

    def _request(self, frame: bytes, ts: float) -> dict[str, Any]:
        event = request_event(frame, self.opts)
        if "correlation_id" in event:
            acks = event.get("body", {}).get("acks") if event["api_key"] == kproto.ApiKey.PRODUCE else None
            if acks != 0:
                self.pending[event["correlation_id"]] = _Pending(event["api_key"], event["version"], ts)
        return event

    def _response(self, frame: bytes, ts: float) -> dict[str, Any]:
        correlation_id = int.from_bytes(frame[4:8], "big", signed=True) if len(frame) >= 8 else None
        pending = self.pending.pop(correlation_id, None) if correlation_id is not None else None
        if pending is None:
            message = (
                f"no request with correlation id {correlation_id} was captured on this connection"
                if correlation_id is not None
                else f"a response of {len(frame)} bytes has no correlation id"
            )
            return {
                "direction": "response",
                "correlation_id": correlation_id,
                "error": error_object(kind="UnmatchedResponse", message=message),
                "frame_size": len(frame),
                "frame_data": self.opts.encode(frame[:QUOTED_FRAME_BYTES]),
            }
        event = response_event(frame, pending.api_key, pending.version, self.opts)
        event["latency_ms"] = round((ts - pending.ts) * 1000, 3)
        return event

    def _event(self, side: _Direction, ts: float, event: dict[str, Any]) -> dict[str, Any]:
        when = datetime.fromtimestamp(ts, UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")
        head = {
            "ts": round(ts, 6),
            "time": when,
            "connection": {"id": self.number, "src": side.src, "dst": side.dst},
        }
        return {**head, **event}


def inspect_capture(segments: Iterable[Segment], ports: set[int], opts: Options) -> Iterator[dict[str, Any]]:
    """Events for every Kafka frame in ``segments``, in the order the capture completes them.

    Connections are numbered from 1 in the order they appear; a SYN on a
    client/broker pair already seen starts a new connection (the port was
    reused) after finishing the old one.
    """
    conversations: dict[tuple[str, str], Conversation] = {}
    numbers = itertools.count(1)
    last_ts = 0.0
    for seg in segments:
        last_ts = seg.ts
        to_broker = seg.dst_port in ports
        key = (seg.src, seg.dst) if to_broker else (seg.dst, seg.src)
        conv = conversations.get(key)
        if conv is not None and to_broker and seg.syn and seg.ack is None and conv.is_new_connection(seg.seq):
            yield from conv.finish(seg.ts)
            conv = None
        if conv is None:
            conv = conversations[key] = Conversation(next(numbers), key[0], key[1], opts)
        yield from conv.segment(seg, to_broker)
    for conv in conversations.values():
        yield from conv.finish(last_ts)
