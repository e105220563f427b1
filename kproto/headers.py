"""Request and response headers.

Request header v0 carries api key, version and correlation id; v1 adds the
client id (always a classic nullable string, even in v2); v2 adds tagged
fields and is used by flexible request versions.  Response header v0 is the
correlation id alone; v1 adds tagged fields.  ApiVersions responses always
use header v0 so that a client can read the error whatever version it sent.
"""

from __future__ import annotations

from kproto.primitives import Int16, Int32
from kproto.schema import Field, Message, String

REQUEST_HEADER = Message("RequestHeader", api_key=None, valid="0-2", flexible="2+", fields=[
    Field("request_api_key", Int16),
    Field("request_api_version", Int16),
    Field("correlation_id", Int32),
    Field("client_id", String, versions="1+", nullable="1+", flexible="none"),
])

RESPONSE_HEADER = Message("ResponseHeader", api_key=None, valid="0-1", flexible="1+", fields=[
    Field("correlation_id", Int32),
])
