"""DescribeDelegationToken (api key 41), versions 0-3.

List delegation tokens by owner.

What each version changes (derived from the field ranges):

* v1: same layout (new semantics or errors)
* v2: flexible (compact strings and arrays, tagged fields)
* v3: response adds ``tokens.token_requester_principal_type``, ``tokens.token_requester_principal_name``
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Int16, Int32, Int64
from kproto.schema import Array, Bytes, Field, Message, String

REQUEST = Message("DescribeDelegationTokenRequest", api_key=41, valid="0-3", flexible="2+", fields=[
    Field("owners", Array([
        Field("principal_type", String),
        Field("principal_name", String),
    ]), nullable="0+"),
])

RESPONSE = Message("DescribeDelegationTokenResponse", api_key=41, valid="0-3", flexible="2+", fields=[
    Field("error_code", Int16),
    Field("tokens", Array([
        Field("principal_type", String),
        Field("principal_name", String),
        Field("token_requester_principal_type", String, versions="3+"),
        Field("token_requester_principal_name", String, versions="3+"),
        Field("issue_timestamp", Int64),
        Field("expiry_timestamp", Int64),
        Field("max_timestamp", Int64),
        Field("token_id", String),
        Field("hmac", Bytes),
        Field("renewers", Array([
            Field("principal_type", String),
            Field("principal_name", String),
        ])),
    ])),
    Field("throttle_time_ms", Int32),
])
