"""ExpireDelegationToken (api key 40), versions 0-2.

Expire (or shorten) a delegation token.

What each version changes (derived from the field ranges):

* v1: same layout (new semantics or errors)
* v2: flexible (compact strings and arrays, tagged fields)
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Int16, Int32, Int64
from kproto.schema import Bytes, Field, Message

REQUEST = Message("ExpireDelegationTokenRequest", api_key=40, valid="0-2", flexible="2+", fields=[
    Field("hmac", Bytes),
    Field("expiry_time_period_ms", Int64),
])

RESPONSE = Message("ExpireDelegationTokenResponse", api_key=40, valid="0-2", flexible="2+", fields=[
    Field("error_code", Int16),
    Field("expiry_timestamp_ms", Int64),
    Field("throttle_time_ms", Int32),
])
