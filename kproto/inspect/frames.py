"""Frames given by hand: hex text or raw bytes, one frame or several in a row.

Rules of this module:

* Input is bytes.  If it is nothing but hex digits, whitespace, ``:`` and
  ``0x`` prefixes it is hex text (what a log line or Wireshark's "copy as
  hex stream" gives); anything else is raw bytes.  Either can be forced.
* Frames carry their int32 size prefix, as on the wire; several may follow
  each other, split with :class:`kproto.FrameDecoder`.  Input whose first
  four bytes cannot be a size prefix (more than the input holds) is taken as
  one frame without its prefix, which is added.
* Requests decode by themselves.  A response can only be decoded knowing
  the api key and version of its request, so responses need ``response_to``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import kproto
from kproto.frames import frame_size
from kproto.inspect.render import Options, api_name, error_object, request_event, response_event

__all__ = ["decode_frames", "looks_like_hex", "parse_api", "parse_input", "split_frames"]

_HEX_TEXT = re.compile(rb"(?:\s|:|0x|0X|[0-9a-fA-F])*")
_HEX_NOISE = re.compile(rb"\s|:|0x|0X")


def looks_like_hex(data: bytes) -> bool:
    """Whether ``data`` is hex text (and not raw bytes)."""
    return bool(data.strip()) and _HEX_TEXT.fullmatch(data) is not None


def parse_input(data: bytes, form: str = "auto") -> bytes:
    """The bytes that ``data`` stands for: ``form`` is "auto", "hex" or "raw"."""
    if form == "raw" or (form == "auto" and not looks_like_hex(data)):
        return data
    digits = _HEX_NOISE.sub(b"", data)
    try:
        return bytes.fromhex(digits.decode("ascii"))
    except ValueError as exc:
        raise ValueError(f"not hex: {exc}") from None


def split_frames(data: bytes, *, prefixed: bool | None = None) -> tuple[list[bytes], bytes]:
    """``(frames, leftover)``: the frames in ``data`` and the bytes after the last whole one.

    ``prefixed`` None guesses (see the module's rules); False adds the prefix
    to the whole input, True never does.
    """
    if prefixed is None:
        prefixed = _fits_prefix(data)
    if not prefixed:
        return [kproto.add_prefix(data)], b""
    decoder = kproto.FrameDecoder()
    decoder.feed(data)
    frames: list[bytes] = []
    try:
        while (frame := decoder.next_frame()) is not None:
            frames.append(frame)
    except kproto.KprotoError:
        pass
    consumed = sum(len(f) for f in frames)
    return frames, data[consumed:]


def _fits_prefix(data: bytes) -> bool:
    return len(data) >= 4 and 0 <= int.from_bytes(data[:4], "big", signed=True) <= len(data) - 4


def _known_request_payload(data: bytes) -> bool:
    """Whether ``data`` starts like a request header of a key and version kproto knows."""
    if len(data) < 4:
        return False
    api_key, version = (
        int.from_bytes(data[:2], "big", signed=True),
        int.from_bytes(data[2:4], "big", signed=True),
    )
    low_high = kproto.supported_versions().get(api_key)
    return low_high is not None and low_high[0] <= version <= low_high[1]


def parse_api(text: str) -> tuple[int, int]:
    """``"Metadata:12"``, ``"metadata:12"``, ``"METADATA:12"`` or ``"3:12"`` -> ``(3, 12)``."""
    name, sep, version = text.partition(":")
    if not sep or not version.strip().isdigit():
        raise ValueError(f"expected API:VERSION, e.g. Metadata:12 or 3:12, got {text!r}")
    name = name.strip()
    if name.lstrip("-").isdigit():
        return int(name), int(version)
    wanted = name.replace("_", "").replace("-", "").lower()
    for key in kproto.ApiKey:
        if api_name(key).lower() == wanted:
            return int(key), int(version)
    raise ValueError(f"unknown API {name!r}: give Kafka's name (e.g. ListOffsets) or its number")


def decode_frames(
    data: bytes,
    opts: Options,
    *,
    response_to: tuple[int, int] | None = None,
    prefixed: bool | None = None,
) -> Iterator[dict[str, Any]]:
    """One event per frame of ``data``; a trailing partial frame becomes an error event.

    Without ``prefixed``, input is taken as one frame lacking its size prefix
    only when its first four bytes cannot be a prefix and, for requests, they
    name a key and version kproto knows: a frame cut short stays a frame.
    """
    if prefixed is None and not _fits_prefix(data):
        prefixed = not (response_to is not None or _known_request_payload(data))
    frames, leftover = split_frames(data, prefixed=prefixed)
    for index, frame in enumerate(frames):
        if response_to is None:
            event = request_event(frame, opts)
        else:
            event = response_event(frame, response_to[0], response_to[1], opts)
        yield {"frame": index, **event}
    if leftover:
        yield {
            "frame": len(frames),
            "error": _leftover_error(leftover),
            "skipped_bytes": len(leftover),
        }


def _leftover_error(leftover: bytes) -> dict[str, Any]:
    if len(leftover) < 4:
        return error_object(
            kind="TruncatedFrame", message=f"{len(leftover)} bytes left, too few for a size prefix"
        )
    try:
        size = frame_size(leftover)
    except kproto.KprotoError as exc:
        return error_object(exc)
    return error_object(
        kind="TruncatedFrame", message=f"size prefix announces {size} bytes, only {len(leftover) - 4} follow"
    )
