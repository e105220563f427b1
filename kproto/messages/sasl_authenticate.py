"""SaslAuthenticate (api key 36), versions 0-2.

One SASL authentication round trip (the mechanism's tokens).

What each version changes (derived from the field ranges):

* v1: response adds ``session_lifetime_ms``
* v2: flexible (compact strings and arrays, tagged fields)
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Int16, Int64
from kproto.schema import Bytes, Field, Message, String

REQUEST = Message("SaslAuthenticateRequest", api_key=36, valid="0-2", flexible="2+", fields=[
    Field("auth_bytes", Bytes),
])

RESPONSE = Message("SaslAuthenticateResponse", api_key=36, valid="0-2", flexible="2+", fields=[
    Field("error_code", Int16),
    Field("error_message", String, nullable="0+"),
    Field("auth_bytes", Bytes),
    Field("session_lifetime_ms", Int64, versions="1+"),
])
