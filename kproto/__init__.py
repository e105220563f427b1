"""kproto: the Apache Kafka wire protocol as data, without I/O.

Encode a request to bytes, decode bytes to a request, the same for
responses; build and read record sets.  No sockets, no event loop, no files:
usable from any broker, client, proxy or test.

    >>> import kproto
    >>> frame = kproto.encode_request(kproto.ApiKey.METADATA, 0, correlation_id=7,
    ...                               body={"topics": [{"name": "events"}]}, client_id="me")
    >>> req = kproto.decode_request(frame)
    >>> req.api_key, req.version, req.correlation_id, req.client_id, req.body.topics[0].name
    (3, 0, 7, 'me', 'events')
"""

from __future__ import annotations

from kproto.api_keys import ApiKey
from kproto.codec import (
    Request,
    RequestPeek,
    Response,
    decode_request,
    decode_response,
    encode_request,
    encode_response,
    encode_response_header,
    peek_request,
    request_header_version,
    response_header_version,
)
from kproto.error_codes import ErrorCode
from kproto.errors import (
    CorruptRecordError,
    DecodeError,
    EncodeError,
    FrameTooLargeError,
    KprotoError,
    UnsupportedVersionError,
)
from kproto.frames import DEFAULT_MAX_FRAME_SIZE, FrameDecoder, add_prefix
from kproto.registry import supported_versions

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_MAX_FRAME_SIZE",
    "ApiKey",
    "CorruptRecordError",
    "DecodeError",
    "EncodeError",
    "ErrorCode",
    "FrameDecoder",
    "FrameTooLargeError",
    "KprotoError",
    "Request",
    "RequestPeek",
    "Response",
    "UnsupportedVersionError",
    "add_prefix",
    "decode_request",
    "decode_response",
    "encode_request",
    "encode_response",
    "encode_response_header",
    "peek_request",
    "request_header_version",
    "response_header_version",
    "supported_versions",
]
