"""RenewDelegationToken (api key 39), versions 0-2.

Extend a delegation token's expiry time.

What each version changes (derived from the field ranges):

* v1: same layout (new semantics or errors)
* v2: flexible (compact strings and arrays, tagged fields)
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Int16, Int32, Int64
from kproto.schema import Bytes, Field, Message

REQUEST = Message("RenewDelegationTokenRequest", api_key=39, valid="0-2", flexible="2+", fields=[
    Field("hmac", Bytes),
    Field("renew_period_ms", Int64),
])

RESPONSE = Message("RenewDelegationTokenResponse", api_key=39, valid="0-2", flexible="2+", fields=[
    Field("error_code", Int16),
    Field("expiry_timestamp_ms", Int64),
    Field("throttle_time_ms", Int32),
])
