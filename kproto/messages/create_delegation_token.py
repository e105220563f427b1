"""CreateDelegationToken (api key 38), versions 0-3.

Create a delegation token for the authenticated principal.

What each version changes (derived from the field ranges):

* v1: same layout (new semantics or errors)
* v2: flexible (compact strings and arrays, tagged fields)
* v3: request adds ``owner_principal_type``, ``owner_principal_name``; response adds ``token_requester_principal_type``, ``token_requester_principal_name``
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Int16, Int32, Int64
from kproto.schema import Array, Bytes, Field, Message, String

REQUEST = Message("CreateDelegationTokenRequest", api_key=38, valid="0-3", flexible="2+", fields=[
    Field("owner_principal_type", String, versions="3+", nullable="3+"),
    Field("owner_principal_name", String, versions="3+", nullable="3+"),
    Field("renewers", Array([
        Field("principal_type", String),
        Field("principal_name", String),
    ])),
    Field("max_lifetime_ms", Int64),
])

RESPONSE = Message("CreateDelegationTokenResponse", api_key=38, valid="0-3", flexible="2+", fields=[
    Field("error_code", Int16),
    Field("principal_type", String),
    Field("principal_name", String),
    Field("token_requester_principal_type", String, versions="3+"),
    Field("token_requester_principal_name", String, versions="3+"),
    Field("issue_timestamp_ms", Int64),
    Field("expiry_timestamp_ms", Int64),
    Field("max_timestamp_ms", Int64),
    Field("token_id", String),
    Field("hmac", Bytes),
    Field("throttle_time_ms", Int32),
])
