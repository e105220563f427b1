"""DescribeUserScramCredentials (api key 50), version 0.

Describe users' SCRAM credentials (mechanisms and iterations).

What each version changes (derived from the field ranges):

* v0: flexible from the start
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Int8, Int16, Int32
from kproto.schema import Array, Field, Message, String

REQUEST = Message("DescribeUserScramCredentialsRequest", api_key=50, valid="0", flexible="0+", fields=[
    Field("users", Array([
        Field("name", String),
    ]), nullable="0+"),
])

RESPONSE = Message("DescribeUserScramCredentialsResponse", api_key=50, valid="0", flexible="0+", fields=[
    Field("throttle_time_ms", Int32),
    Field("error_code", Int16),
    Field("error_message", String, nullable="0+"),
    Field("results", Array([
        Field("user", String),
        Field("error_code", Int16),
        Field("error_message", String, nullable="0+"),
        Field("credential_infos", Array([
            Field("mechanism", Int8),
            Field("iterations", Int32),
        ])),
    ])),
])
