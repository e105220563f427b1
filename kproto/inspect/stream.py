"""One direction of a TCP connection as a byte stream: segments in, ordered bytes out.

Rules of this module:

* Sequence numbers are 32-bit and wrap: positions are compared by their
  signed distance modulo 2**32, never by ``<``.
* A SYN fixes where the stream starts.  Without one (the capture began
  mid-connection) the first segment with data does, and the stream says so
  (``started_mid_stream``): its first bytes may be the middle of a frame.
* Bytes seen twice (retransmissions, keep-alive probes, overlapping
  segments) are delivered once.  Segments that arrive early wait for the
  gap before them to be filled.
* A gap is given up on, and reported as missing bytes, when the peer
  acknowledges data the capture never showed (the capture dropped it), when
  too much waits behind it, or when the capture ends.  What follows a gap
  starts like a mid-stream capture.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Chunk", "TcpStream"]

_MOD = 1 << 32
#: Out-of-order bytes held back before the gap in front of them is given up on.
MAX_WAITING_BYTES = 8 * 1024 * 1024


def distance(a: int, b: int) -> int:
    """``a - b`` in sequence space: negative when ``a`` is before ``b``."""
    d = (a - b) % _MOD
    return d - _MOD if d >= _MOD // 2 else d


@dataclass
class Chunk:
    """Bytes that follow the previous chunk, or ``missing`` bytes the capture does not hold."""

    data: bytes = b""
    missing: int = 0


@dataclass
class TcpStream:
    """Reassembles one direction; feed segments, collect :class:`Chunk` s."""

    next_seq: int | None = None
    first_seq: int | None = None  # the sequence number after the SYN, when it was captured
    started_mid_stream: bool = False
    retransmitted_bytes: int = 0
    _waiting: dict[int, bytes] = field(default_factory=dict)  # seq -> payload, ahead of next_seq

    def syn(self, seq: int) -> None:
        if self.next_seq is None:
            self.next_seq = self.first_seq = (seq + 1) % _MOD

    def fin(self, end: int) -> None:
        """A FIN after the byte before ``end``: it takes one sequence number, the peer acks it."""
        if self.next_seq is not None and end % _MOD == self.next_seq:
            self.next_seq = (self.next_seq + 1) % _MOD

    def segment(self, seq: int, payload: bytes, missing: int = 0) -> list[Chunk]:
        """The bytes this segment makes available, in order.

        ``missing``: bytes of the segment after ``payload`` that the capture
        cut off (its snap length); reported as missing when their turn comes.
        """
        if not payload:
            return []
        if self.next_seq is None:
            self.next_seq = seq
            self.started_mid_stream = True
        ahead = distance(seq, self.next_seq)
        if ahead > 0:
            known = self._waiting.get(seq)
            if known is None or len(known) < len(payload):
                self._waiting[seq] = payload
            if sum(map(len, self._waiting.values())) > MAX_WAITING_BYTES:
                return self._skip_to(self._first_waiting())
            return []
        if -ahead >= len(payload):
            self.retransmitted_bytes += len(payload)
            return []
        self.retransmitted_bytes += -ahead
        fresh = payload[-ahead:]
        self.next_seq = (self.next_seq + len(fresh) + missing) % _MOD
        cut = [Chunk(missing=missing)] if missing else []
        return [Chunk(fresh), *cut, *self._drain()]

    def acknowledged(self, ack: int) -> list[Chunk]:
        """The peer has received everything before ``ack``: bytes not captured by then are lost."""
        if self.next_seq is None or distance(ack, self.next_seq) <= 0:
            return []
        out: list[Chunk] = []
        while self.next_seq is not None and distance(ack, self.next_seq) > 0:
            first = self._first_waiting()
            if first is None or distance(first, ack) >= 0:
                out.append(Chunk(missing=distance(ack, self.next_seq)))
                self.next_seq = ack
                out.extend(self._drain())
                break
            out.extend(self._skip_to(first))
        return out

    def finish(self) -> list[Chunk]:
        """At the end of the capture: whatever waits behind a gap, after the gap reported."""
        out: list[Chunk] = []
        while (first := self._first_waiting()) is not None:
            out.extend(self._skip_to(first))
        return out

    def _first_waiting(self) -> int | None:
        if not self._waiting or self.next_seq is None:
            return None
        base = self.next_seq
        return min(self._waiting, key=lambda s: distance(s, base))

    def _skip_to(self, seq: int | None) -> list[Chunk]:
        if seq is None or self.next_seq is None:
            return []
        gap = distance(seq, self.next_seq)
        out = [Chunk(missing=gap)] if gap > 0 else []
        if gap > 0:
            self.next_seq = seq
        return out + self._drain()

    def _drain(self) -> list[Chunk]:
        out: list[Chunk] = []
        assert self.next_seq is not None
        while self._waiting:
            ready = [s for s in self._waiting if distance(s, self.next_seq) <= 0]
            if not ready:
                break
            for seq in ready:
                payload = self._waiting.pop(seq)
                behind = -distance(seq, self.next_seq)
                if behind < len(payload):
                    self.retransmitted_bytes += behind
                    fresh = payload[behind:]
                    out.append(Chunk(fresh))
                    self.next_seq = (self.next_seq + len(fresh)) % _MOD
                else:
                    self.retransmitted_bytes += len(payload)
        return out
