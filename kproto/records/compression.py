"""Compression codecs of Kafka record sets: gzip, snappy, lz4 and zstd.

What: ``compress(codec, data)`` and ``decompress(codec, data)`` for the codec ids that
appear in the low three bits of a message's (magic 0/1) or record batch's (magic 2)
attributes, in exactly the byte formats the Kafka clients and brokers exchange:

* gzip   -- an RFC 1952 gzip stream (``zlib`` with ``wbits=31``); concatenated members are
  accepted on read, as Java's ``GZIPInputStream`` does.
* snappy -- the *xerial* block framing written by the Java client::

      header = b"\\x82SNAPPY\\x00" + int32 version (1) + int32 compat (1)   (16 bytes)
      stream = header { int32 block_length, raw snappy block }          (blocks of 32 KiB)

  On read a plain raw snappy block (no header, as librdkafka and some Go clients write it)
  is accepted too.  The version/compat words are not checked (redpanda writes them
  little-endian, see kafka-python issue 2414).
* lz4    -- the LZ4 *frame* format, blocks independent (Kafka's reader decompresses every
  block on its own).  Kafka 0.8/0.9 (KAFKA-3160) computed the frame descriptor's header
  checksum byte ``HC`` over the 4 magic bytes too; the reader accepts both that and the
  correct checksum, ``compress(LZ4, ..., legacy_lz4=True)`` writes the old one (what
  magic-0 consumers expect).
* zstd   -- a zstd frame (only valid in magic-2 record batches).

Why bounded: a few kilobytes of compressed data can claim gigabytes.  ``decompress`` never
produces more than ``max_size`` bytes (default 64 MiB) and raises
:class:`~kproto.errors.CorruptRecordError` instead, so one malicious produce request cannot
exhaust the broker's memory.  Any failure to decompress, whatever the bytes, is reported
as ``CorruptRecordError``: callers catch one exception type.

Implementation: cramjam (Rust) for snappy, lz4 and zstd, stdlib ``zlib`` for gzip; the few
bytes of lz4 frame-descriptor checksums use the pure-Python :func:`xxh32` below because
cramjam does not expose xxHash.
"""

from __future__ import annotations

import struct
import zlib
from enum import IntEnum
from types import ModuleType

from kproto.errors import CorruptRecordError, EncodeError

__all__ = [
    "DEFAULT_MAX_DECOMPRESSED",
    "Compression",
    "compress",
    "decompress",
    "xxh32",
]


def _cramjam() -> ModuleType:
    """cramjam, imported with the first snappy, lz4 or zstd batch: a broker's start never needs it."""
    import cramjam

    return cramjam


#: Default ceiling of one decompression's output (zip-bomb guard).
DEFAULT_MAX_DECOMPRESSED = 64 * 1024 * 1024


class Compression(IntEnum):
    """Codec ids of the attributes field (``attributes & 0x07``)."""

    NONE = 0
    GZIP = 1
    SNAPPY = 2
    LZ4 = 3
    ZSTD = 4


# --------------------------------------------------------------------------- xxHash32

_P1 = 2654435761
_P2 = 2246822519
_P3 = 3266489917
_P4 = 668265263
_P5 = 374761393
_M32 = 0xFFFFFFFF
_U32LE = struct.Struct("<I")


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _M32


def xxh32(data: bytes | bytearray | memoryview, seed: int = 0) -> int:
    """Return the 32-bit xxHash of ``data`` (pure Python).

    Only meant for the 2-15 byte LZ4 frame descriptor, so speed does not matter; the full
    algorithm (16-byte stripes included) is implemented so the function is correct for any
    input and can be tested against the reference vectors.
    """
    data = bytes(data)
    n = len(data)
    i = 0
    if n >= 16:
        v1 = (seed + _P1 + _P2) & _M32
        v2 = (seed + _P2) & _M32
        v3 = seed & _M32
        v4 = (seed - _P1) & _M32
        limit = n - 16
        while i <= limit:
            a, b, c, d = struct.unpack_from("<4I", data, i)
            v1 = (_rotl((v1 + a * _P2) & _M32, 13) * _P1) & _M32
            v2 = (_rotl((v2 + b * _P2) & _M32, 13) * _P1) & _M32
            v3 = (_rotl((v3 + c * _P2) & _M32, 13) * _P1) & _M32
            v4 = (_rotl((v4 + d * _P2) & _M32, 13) * _P1) & _M32
            i += 16
        h = (_rotl(v1, 1) + _rotl(v2, 7) + _rotl(v3, 12) + _rotl(v4, 18)) & _M32
    else:
        h = (seed + _P5) & _M32
    h = (h + n) & _M32
    while i + 4 <= n:
        (lane,) = _U32LE.unpack_from(data, i)
        h = (_rotl((h + lane * _P3) & _M32, 17) * _P4) & _M32
        i += 4
    while i < n:
        h = (_rotl((h + data[i] * _P5) & _M32, 11) * _P1) & _M32
        i += 1
    h ^= h >> 15
    h = (h * _P2) & _M32
    h ^= h >> 13
    h = (h * _P3) & _M32
    h ^= h >> 16
    return h


# --------------------------------------------------------------------------- gzip

_GZIP_WBITS = 16 + zlib.MAX_WBITS
_GZIP_LEVEL = 6  # java.util.zip.Deflater's default, what Kafka's producer uses


def _gzip_compress(data: bytes) -> bytes:
    # mtime=0 makes the output deterministic (same input -> same bytes), which golden tests
    # and idempotent re-compression rely on.
    co = zlib.compressobj(_GZIP_LEVEL, zlib.DEFLATED, _GZIP_WBITS)
    return co.compress(data) + co.flush()


def _gzip_decompress(data: bytes, max_size: int) -> bytes:
    out: list[bytes] = []
    total = 0
    rest = data
    while True:
        d = zlib.decompressobj(_GZIP_WBITS)
        chunk = d.decompress(rest, max_size + 1 - total)
        total += len(chunk)
        out.append(chunk)
        if total > max_size or d.unconsumed_tail:
            raise CorruptRecordError(f"gzip data inflates beyond {max_size} bytes")
        if not d.eof:
            raise CorruptRecordError("truncated gzip stream")
        rest = d.unused_data
        if not rest.strip(b"\x00"):  # trailing zero padding is tolerated, like gzip.py
            return b"".join(out)


# --------------------------------------------------------------------------- snappy

_XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER = _XERIAL_MAGIC + struct.pack(">ii", 1, 1)
_XERIAL_BLOCK = 32 * 1024
_I32BE = struct.Struct(">i")


def _snappy_compress(data: bytes) -> bytes:
    parts = [_XERIAL_HEADER]
    view = memoryview(data)
    compress_raw = _cramjam().snappy.compress_raw
    for start in range(0, len(data), _XERIAL_BLOCK):
        block = bytes(compress_raw(view[start : start + _XERIAL_BLOCK]))
        parts.append(_I32BE.pack(len(block)))
        parts.append(block)
    return b"".join(parts)


def _snappy_raw(block: bytes | memoryview, budget: int) -> bytes:
    """Decompress one raw snappy block after checking its declared length against budget."""
    size = _cramjam().snappy.decompress_raw_len(block)
    if size > budget:
        raise CorruptRecordError("snappy data inflates beyond the decompression limit")
    return bytes(_cramjam().snappy.decompress_raw(block))


def _snappy_decompress(data: bytes, max_size: int) -> bytes:
    if len(data) < 16 or data[:8] != _XERIAL_MAGIC:
        return _snappy_raw(data, max_size)
    view = memoryview(data)
    out: list[bytes] = []
    total = 0
    pos = 16
    end = len(data)
    while pos < end:
        if pos + 4 > end:
            raise CorruptRecordError("truncated xerial snappy block length")
        (length,) = _I32BE.unpack_from(data, pos)
        pos += 4
        if length < 0 or pos + length > end:
            raise CorruptRecordError("xerial snappy block overruns the stream")
        block = _snappy_raw(view[pos : pos + length], max_size - total)
        total += len(block)
        out.append(block)
        pos += length
    return b"".join(out)


# --------------------------------------------------------------------------- lz4

_LZ4_MAGIC = b"\x04\x22\x4d\x18"
_LZ4_BLOCK_MAX = {4: 64 * 1024, 5: 256 * 1024, 6: 1024 * 1024, 7: 4 * 1024 * 1024}
_LZ4_UNCOMPRESSED_BIT = 0x80000000


def _lz4_hc(descriptor: bytes) -> int:
    """Header checksum byte: second byte of xxh32 (``(h >> 8) & 0xFF``)."""
    return (xxh32(descriptor) >> 8) & 0xFF


def _lz4_compress(data: bytes, legacy: bool) -> bytes:
    c = _cramjam().lz4.Compressor(block_linked=False, content_checksum=False)
    c.compress(data)
    frame = bytes(c.finish())
    if legacy:
        # cramjam never writes the content-size field (old Kafka rejects it), so the frame
        # descriptor is FLG, BD, HC at offsets 4, 5, 6.  KAFKA-3160: HC over magic+FLG+BD.
        if frame[4] & 0x08:  # pragma: no cover - defensive, depends on cramjam defaults
            raise EncodeError("lz4 frame carries a content size; cannot write the legacy form")
        frame = frame[:6] + bytes((_lz4_hc(frame[:6]),)) + frame[7:]
    return frame


def _lz4_decompress(data: bytes, max_size: int) -> bytes:
    """Validate the frame structure, fix a KAFKA-3160 header checksum, inflate bounded."""
    end = len(data)
    if end < 7 or data[:4] != _LZ4_MAGIC:
        raise CorruptRecordError("not an lz4 frame (bad magic)")
    flg, bd = data[4], data[5]
    if flg >> 6 != 1 or flg & 0x02 or bd & 0x8F:
        raise CorruptRecordError("unsupported lz4 frame descriptor")
    block_max = _LZ4_BLOCK_MAX.get((bd >> 4) & 0x07)
    if block_max is None:
        raise CorruptRecordError("invalid lz4 block maximum size")
    hc_pos = 6 + (8 if flg & 0x08 else 0) + (4 if flg & 0x01 else 0)
    if hc_pos >= end:
        raise CorruptRecordError("truncated lz4 frame descriptor")
    hc = data[hc_pos]
    if hc != _lz4_hc(data[4:hc_pos]):
        if hc != _lz4_hc(data[:hc_pos]):  # KAFKA-3160 form?
            raise CorruptRecordError("lz4 frame descriptor checksum mismatch")
        data = data[:hc_pos] + bytes((_lz4_hc(data[4:hc_pos]),)) + data[hc_pos + 1 :]
    block_checksum = 4 if flg & 0x10 else 0
    # Walk the blocks: proves the framing and yields an upper bound of the output size.
    blocks: list[tuple[int, int, bool]] = []
    bound = 0
    pos = hc_pos + 1
    while True:
        if pos + 4 > end:
            raise CorruptRecordError("truncated lz4 frame")
        (word,) = _U32LE.unpack_from(data, pos)
        pos += 4
        if word == 0:
            break
        raw = bool(word & _LZ4_UNCOMPRESSED_BIT)
        size = word & ~_LZ4_UNCOMPRESSED_BIT
        if size > block_max or pos + size + block_checksum > end:
            raise CorruptRecordError("lz4 block overruns the frame")
        blocks.append((pos, size, raw))
        bound += size if raw else block_max
        pos += size + block_checksum
    pos += 4 if flg & 0x04 else 0
    if pos != end:
        raise CorruptRecordError("lz4 frame truncated or followed by extra bytes")
    if bound <= max_size:
        out = bytes(_cramjam().lz4.decompress(data))  # verifies block/content checksums too
    else:
        out = _lz4_blocks(data, blocks, block_max, max_size)
    if len(out) > max_size:
        raise CorruptRecordError(f"lz4 data inflates beyond {max_size} bytes")
    return out


def _lz4_blocks(data: bytes, blocks: list[tuple[int, int, bool]], block_max: int, max_size: int) -> bytes:
    """Inflate block by block, stopping as soon as the output passes ``max_size``.

    Used only when the frame's worst case exceeds the limit.  Blocks are decompressed
    independently, like Kafka's own ``KafkaLZ4BlockInputStream`` does.
    """
    view = memoryview(data)
    scratch = bytearray(block_max)
    out: list[bytes] = []
    total = 0
    for pos, size, raw in blocks:
        if raw:
            piece = bytes(view[pos : pos + size])
        else:
            n = _cramjam().lz4.decompress_block_into(view[pos : pos + size], scratch)
            piece = bytes(scratch[:n])
        total += len(piece)
        if total > max_size:
            raise CorruptRecordError(f"lz4 data inflates beyond {max_size} bytes")
        out.append(piece)
    return b"".join(out)


# --------------------------------------------------------------------------- zstd

_ZSTD_MAGIC = 0xFD2FB528
_ZSTD_BLOCK_MAX = 128 * 1024


def _zstd_bound(data: bytes) -> int:
    """Walk zstd (and skippable) frames; return an upper bound of the output size."""
    end = len(data)
    pos = 0
    bound = 0
    while pos < end:
        if pos + 4 > end:
            raise CorruptRecordError("truncated zstd frame")
        (magic,) = _U32LE.unpack_from(data, pos)
        pos += 4
        if magic & 0xFFFFFFF0 == 0x184D2A50:  # skippable frame
            if pos + 4 > end:
                raise CorruptRecordError("truncated zstd skippable frame")
            (size,) = _U32LE.unpack_from(data, pos)
            pos += 4 + size
            continue
        if magic != _ZSTD_MAGIC or pos >= end:
            raise CorruptRecordError("not a zstd frame")
        fhd = data[pos]
        single = fhd & 0x20
        fcs_flag = fhd >> 6
        pos += 1 + (0 if single else 1) + (0, 1, 2, 4)[fhd & 0x03] + ((1 if single else 0), 2, 4, 8)[fcs_flag]
        while True:
            if pos + 3 > end:
                raise CorruptRecordError("truncated zstd block")
            header = data[pos] | data[pos + 1] << 8 | data[pos + 2] << 16
            pos += 3
            kind = (header >> 1) & 0x03
            size = header >> 3
            if kind == 0:
                pos += size
                bound += size
            elif kind == 1:
                pos += 1
                bound += size
            elif kind == 2:
                pos += size
                bound += _ZSTD_BLOCK_MAX
            else:
                raise CorruptRecordError("reserved zstd block type")
            if header & 1:
                break
        pos += 4 if fhd & 0x04 else 0
    if pos != end:
        raise CorruptRecordError("truncated zstd frame")
    return bound


def _zstd_decompress(data: bytes, max_size: int) -> bytes:
    if _zstd_bound(data) <= max_size:
        out = bytes(_cramjam().zstd.decompress(data))
    else:
        # Worst case too large: inflate into a buffer one byte larger than allowed; the
        # decoder fails when it would write past it.
        scratch = bytearray(max_size + 1)
        n = _cramjam().zstd.decompress_into(data, scratch)
        out = bytes(scratch[:n])
    if len(out) > max_size:
        raise CorruptRecordError(f"zstd data inflates beyond {max_size} bytes")
    return out


# --------------------------------------------------------------------------- dispatch


def compress(
    codec: Compression | int,
    data: bytes | bytearray | memoryview,
    *,
    legacy_lz4: bool = False,
) -> bytes:
    """Compress ``data`` with ``codec`` in the format Kafka expects.

    ``legacy_lz4`` selects the KAFKA-3160 header checksum (for magic-0 message sets).
    Raises :class:`EncodeError` for an unknown codec.
    """
    payload = bytes(data)
    if codec == Compression.NONE:
        return payload
    if codec == Compression.GZIP:
        return _gzip_compress(payload)
    if codec == Compression.SNAPPY:
        return _snappy_compress(payload)
    if codec == Compression.LZ4:
        return _lz4_compress(payload, legacy_lz4)
    if codec == Compression.ZSTD:
        return bytes(_cramjam().zstd.compress(payload))
    raise EncodeError(f"unknown compression codec {codec!r}")


def decompress(
    codec: Compression | int,
    data: bytes | bytearray | memoryview,
    *,
    max_size: int = DEFAULT_MAX_DECOMPRESSED,
) -> bytes:
    """Decompress ``data`` written with ``codec``; never return more than ``max_size`` bytes.

    Every failure -- unknown codec, malformed stream, output over the limit -- raises
    :class:`CorruptRecordError` (the codec id itself came from the wire).
    """
    payload = bytes(data)
    try:
        if codec == Compression.NONE:
            out = payload
        elif codec == Compression.GZIP:
            out = _gzip_decompress(payload, max_size)
        elif codec == Compression.SNAPPY:
            out = _snappy_decompress(payload, max_size)
        elif codec == Compression.LZ4:
            out = _lz4_decompress(payload, max_size)
        elif codec == Compression.ZSTD:
            out = _zstd_decompress(payload, max_size)
        else:
            raise CorruptRecordError(f"unknown compression codec {codec}")
    except CorruptRecordError:
        raise
    except Exception as exc:  # cramjam/zlib/struct errors: all mean "bad bytes"
        raise CorruptRecordError(f"cannot decompress {_name(codec)} data: {exc}") from exc
    if len(out) > max_size:
        raise CorruptRecordError(f"{_name(codec)} data inflates beyond {max_size} bytes")
    return out


def _name(codec: Compression | int) -> str:
    try:
        return Compression(codec).name.lower()
    except ValueError:
        return f"codec {codec}"
