"""Size-prefixed framing: every Kafka request and response is ``int32 size``
followed by ``size`` bytes.

Sans-I/O: :class:`FrameDecoder` is fed whatever bytes arrived and hands out
complete frames; it never touches a socket.  A frame here always means the
whole thing *including* its 4-byte size prefix, which is what
:func:`kproto.encode_request` returns and :func:`kproto.decode_request`
expects, so the prefix never has to be added or stripped by hand.

The size is checked against ``max_size`` as soon as the prefix is seen, before
any buffering: a peer announcing a 2 GiB request costs us four bytes.
"""

from __future__ import annotations

import struct

from kproto.errors import DecodeError, FrameTooLargeError

SIZE = struct.Struct(">i")
DEFAULT_MAX_FRAME_SIZE = 104_857_600  # Kafka's socket.request.max.bytes default (100 MiB)


def frame_size(prefix: bytes | bytearray | memoryview, max_size: int = DEFAULT_MAX_FRAME_SIZE) -> int:
    """The payload size announced by a 4-byte prefix, validated."""
    (size,) = SIZE.unpack_from(prefix)
    if size < 0:
        raise DecodeError(f"negative frame size {size}")
    if size > max_size:
        raise FrameTooLargeError(size, max_size)
    return int(size)


def add_prefix(payload: bytes | bytearray) -> bytes:
    """``payload`` with its size prefix."""
    return SIZE.pack(len(payload)) + payload


class FrameDecoder:
    """Splits a byte stream into frames.

    ``feed()`` what the socket gave, then call ``next_frame()`` until it
    returns ``None``.  A bad size prefix raises and leaves the decoder
    unusable: the only sane reaction is closing that connection.
    """

    def __init__(self, max_size: int = DEFAULT_MAX_FRAME_SIZE) -> None:
        self.max_size = max_size
        self._buf = bytearray()
        self._need: int | None = None  # payload size of the frame being assembled

    def feed(self, data: bytes | bytearray | memoryview) -> None:
        self._buf += data

    @property
    def buffered(self) -> int:
        """Bytes received but not yet handed out."""
        return len(self._buf)

    def next_frame(self) -> bytes | None:
        """The next complete frame (prefix included), or ``None`` if incomplete."""
        if self._need is None:
            if len(self._buf) < 4:
                return None
            self._need = frame_size(self._buf, self.max_size)
        end = 4 + self._need
        if len(self._buf) < end:
            return None
        out = bytes(self._buf[:end])
        if end == len(self._buf):
            self._buf = bytearray()  # not ``del``: an emptied bytearray keeps its capacity
        else:
            del self._buf[:end]
        self._need = None
        return out
