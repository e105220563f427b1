"""Whole requests and responses: header + body, to and from frames.

This is kproto's public face (re-exported by ``kproto``).  A *frame* is the
bytes on the wire including the int32 size prefix (see :mod:`kproto.frames`).

Rules of this module:

* Decoding runs the compiled grammar; if it fails for any reason, the input
  is parsed once more with the interpreted grammar only to learn *where* it
  failed, and a :class:`DecodeError` naming api key, version and field path
  is raised.  Nothing else escapes, whatever the bytes.
* A frame must be consumed exactly: trailing bytes are an error, because a
  client and broker that disagree on a layout should fail loudly, not
  silently drop fields.
* Encoding takes plain dicts/lists (or the Containers decoding returns);
  keys a version does not have are ignored.
* Both directions first try the generated functions of
  :mod:`kproto.fastcodec`; if those fail for any reason, the grammar runs
  as described above, so errors and their messages come from the grammar.
"""

from __future__ import annotations

import io
import struct
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from construct import Construct

from kproto.api_keys import ApiKey
from kproto.errors import DecodeError, EncodeError, KprotoError
from kproto.fastcodec import fast_decoder, fast_encoder
from kproto.frames import DEFAULT_MAX_FRAME_SIZE, SIZE, frame_size
from kproto.headers import REQUEST_HEADER, RESPONSE_HEADER
from kproto.registry import request_declaration, request_message, response_message
from kproto.schema import Message

__all__ = [
    "Request",
    "RequestPeek",
    "Response",
    "decode_request",
    "decode_response",
    "encode_request",
    "encode_response",
    "peek_request",
    "request_header_version",
    "response_header_version",
]

_PEEK = struct.Struct(">ihhi")


@dataclass(frozen=True)
class Request:
    """A decoded request: header fields and the body (a Construct Container)."""

    api_key: int
    version: int
    correlation_id: int
    client_id: str | None
    body: Any
    header_tagged_fields: Mapping[Any, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Response:
    """A decoded response: the correlation id and the body."""

    api_key: int
    version: int
    correlation_id: int
    body: Any


@dataclass(frozen=True)
class RequestPeek:
    """The fixed start of a request header, readable even when the rest is not."""

    api_key: int
    version: int
    correlation_id: int


def request_header_version(api_key: int, version: int) -> int:
    """Header v2 for flexible request versions, v1 otherwise; v0 for ControlledShutdown v0.

    ControlledShutdown v0 predates the client id: Kafka reads its header
    without one, so kproto writes and reads it that way too."""
    if api_key == ApiKey.CONTROLLED_SHUTDOWN and version == 0:
        return 0
    msg = request_declaration(api_key)
    if msg is not None and version in msg.valid and msg.is_flexible(version):
        return 2
    return 1


def response_header_version(api_key: int, version: int) -> int:
    """Header v1 for flexible response versions, v0 otherwise (always v0 for ApiVersions)."""
    if api_key == ApiKey.API_VERSIONS:
        return 0
    msg = request_declaration(api_key)
    if msg is not None and version in msg.valid and msg.is_flexible(version):
        return 1
    return 0


def peek_request(frame: bytes | bytearray | memoryview) -> RequestPeek:
    """Api key, version and correlation id of a request frame, without parsing the rest.

    The broker uses it to answer UNSUPPORTED_VERSION (or to log who sent
    garbage) when the body cannot be decoded.
    """
    if len(frame) < _PEEK.size:
        raise DecodeError(f"request frame of {len(frame)} bytes is shorter than a header")
    _size, api_key, version, correlation_id = _PEEK.unpack_from(frame)
    return RequestPeek(api_key, version, correlation_id)


# --------------------------------------------------------------------------
# Encoding
# --------------------------------------------------------------------------


def _build_frame(parts: list[tuple[Construct, Any]], what: str) -> bytes:
    out = io.BytesIO()
    out.write(b"\0\0\0\0")
    for con, obj in parts:
        try:
            con.build_stream(obj, out)
        except Exception as exc:  # construct raises many types; callers get one
            raise EncodeError(f"cannot encode {what}: {exc}") from exc
    data = out.getbuffer()
    SIZE.pack_into(data, 0, len(data) - 4)
    del data
    return out.getvalue()


def _fast_frame(
    header_msg: Message, hv: int, header: Mapping[str, Any], msg: Message, version: int, body: Any
) -> bytes | None:
    """The frame from the generated encoders, or None to let the grammar encode (and explain)."""
    encode_header = fast_encoder(header_msg, hv)
    encode_body = fast_encoder(msg, version)
    if encode_header is None or encode_body is None:
        return None
    buf = bytearray(4)
    try:
        encode_header(header, buf)
        encode_body(body, buf)
    except Exception:  # any failure: the grammar decides and words the error
        return None
    SIZE.pack_into(buf, 0, len(buf) - 4)
    return bytes(buf)


def _fast_parse(
    frame: bytes | bytearray | memoryview,
    header_msg: Message,
    hv: int,
    msg: Message,
    version: int,
    allow_trailing: bool = False,
) -> tuple[Any, Any] | None:
    """(header, body) from the generated decoders, or None to let the grammar decode (and explain)."""
    decode_header = fast_decoder(header_msg, hv)
    decode_body = fast_decoder(msg, version)
    if decode_header is None or decode_body is None:
        return None
    data = frame if isinstance(frame, bytes) else bytes(frame)
    try:
        header, pos = decode_header(data, 4)
        body, pos = decode_body(data, pos)
    except Exception:  # any failure: the grammar decides and words the error
        return None
    return (header, body) if pos == len(data) or (allow_trailing and pos < len(data)) else None


def encode_request(
    api_key: int,
    version: int,
    correlation_id: int,
    body: Mapping[str, Any],
    *,
    client_id: str | None = None,
) -> bytes:
    """A request frame (size prefix included) ready to be written to a socket."""
    msg = request_message(api_key, version)
    header = {
        "request_api_key": api_key,
        "request_api_version": version,
        "correlation_id": correlation_id,
        "client_id": client_id,
    }
    hv = request_header_version(api_key, version)
    fast = _fast_frame(REQUEST_HEADER, hv, header, msg, version, body)
    if fast is not None:
        return fast
    return _build_frame(
        [(REQUEST_HEADER.struct(hv), header), (msg.struct(version), body)],
        f"{msg.name} v{version}",
    )


def encode_response(api_key: int, version: int, correlation_id: int, body: Mapping[str, Any]) -> bytes:
    """A response frame (size prefix included) for a request of ``api_key``/``version``."""
    msg = response_message(api_key, version)
    hv = response_header_version(api_key, version)
    fast = _fast_frame(RESPONSE_HEADER, hv, {"correlation_id": correlation_id}, msg, version, body)
    if fast is not None:
        return fast
    return _build_frame(
        [(RESPONSE_HEADER.struct(hv), {"correlation_id": correlation_id}), (msg.struct(version), body)],
        f"{msg.name} v{version}",
    )


def encode_response_header(api_key: int, version: int, correlation_id: int) -> bytes:
    """Only the response header (no size prefix): for responses assembled in pieces."""
    hv = response_header_version(api_key, version)
    return bytes(RESPONSE_HEADER.struct(hv).build({"correlation_id": correlation_id}))


# --------------------------------------------------------------------------
# Decoding
# --------------------------------------------------------------------------


def _payload(frame: bytes | bytearray | memoryview, max_size: int) -> io.BytesIO:
    if len(frame) < 4:
        raise DecodeError(f"frame of {len(frame)} bytes has no size prefix")
    size = frame_size(frame, max_size)
    if size != len(frame) - 4:
        raise DecodeError(f"size prefix says {size} bytes, frame carries {len(frame) - 4}")
    stream = io.BytesIO(frame)
    stream.seek(4)
    return stream


def _parse(
    con: Construct,
    plain: Construct,
    stream: io.BytesIO,
    *,
    what: str,
    api_key: int | None,
    version: int | None,
) -> Any:
    start = stream.tell()
    try:
        return con.parse_stream(stream)
    except Exception:  # compiled construct code raises anything; find out where
        stream.seek(start)
        where = "?"
        try:
            plain.parse_stream(stream)
        except Exception as detail:
            where = str(getattr(detail, "path", None) or "?").replace("(parsing) -> ", "")
            exc = detail
        raise DecodeError(
            f"cannot decode {what}: {type(exc).__name__}: {exc}",
            api_key=api_key,
            version=version,
            where=where,
        ) from None


def _expect_end(stream: io.BytesIO, what: str, api_key: int, version: int) -> None:
    rest = len(stream.getbuffer()) - stream.tell()
    if rest:
        raise DecodeError(f"{rest} unexpected bytes after {what}", api_key=api_key, version=version)


def decode_request(
    frame: bytes | bytearray | memoryview,
    *,
    max_size: int = DEFAULT_MAX_FRAME_SIZE,
    allow_trailing: bool = False,
) -> Request:
    """Decode a request frame (size prefix included).

    Raises :class:`UnsupportedVersionError` for an api key or version kproto
    has no grammar for (use :func:`peek_request` to answer it) and
    :class:`DecodeError` for anything malformed.  Bytes after the body are
    an error unless ``allow_trailing``: a Kafka broker reads what the
    version's grammar needs and ignores the rest, and some clients rely on
    it (librdkafka's flexible "all topics" Metadata request carries three).
    """
    stream = _payload(frame, max_size)
    peek = peek_request(frame)
    msg = request_message(peek.api_key, peek.version)
    hv = request_header_version(peek.api_key, peek.version)
    fast = _fast_parse(frame, REQUEST_HEADER, hv, msg, peek.version, allow_trailing)
    if fast is not None:
        return Request(
            api_key=peek.api_key,
            version=peek.version,
            correlation_id=peek.correlation_id,
            client_id=fast[0].get("client_id"),
            body=fast[1],
            header_tagged_fields=fast[0].get("tagged_fields") or {},
        )
    try:
        header = _parse(
            REQUEST_HEADER.struct(hv),
            REQUEST_HEADER.plain_struct(hv),
            stream,
            what="request header",
            api_key=peek.api_key,
            version=peek.version,
        )
        body = _parse(
            msg.struct(peek.version),
            msg.plain_struct(peek.version),
            stream,
            what=msg.name,
            api_key=peek.api_key,
            version=peek.version,
        )
    except KprotoError:
        raise
    if not allow_trailing:
        _expect_end(stream, msg.name, peek.api_key, peek.version)
    return Request(
        api_key=peek.api_key,
        version=peek.version,
        correlation_id=peek.correlation_id,
        client_id=header.get("client_id"),
        body=body,
        header_tagged_fields=header.get("tagged_fields") or {},
    )


def decode_response(
    api_key: int,
    version: int,
    frame: bytes | bytearray | memoryview,
    *,
    max_size: int = DEFAULT_MAX_FRAME_SIZE,
) -> Response:
    """Decode a response frame (size prefix included) to a request of ``api_key``/``version``."""
    msg = response_message(api_key, version)
    stream = _payload(frame, max_size)
    hv = response_header_version(api_key, version)
    fast = _fast_parse(frame, RESPONSE_HEADER, hv, msg, version)
    if fast is not None:
        return Response(
            api_key=api_key, version=version, correlation_id=fast[0]["correlation_id"], body=fast[1]
        )
    header = _parse(
        RESPONSE_HEADER.struct(hv),
        RESPONSE_HEADER.plain_struct(hv),
        stream,
        what="response header",
        api_key=api_key,
        version=version,
    )
    body = _parse(
        msg.struct(version),
        msg.plain_struct(version),
        stream,
        what=msg.name,
        api_key=api_key,
        version=version,
    )
    _expect_end(stream, msg.name, api_key, version)
    return Response(api_key=api_key, version=version, correlation_id=header.correlation_id, body=body)
