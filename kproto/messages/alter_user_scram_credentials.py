"""AlterUserScramCredentials (api key 51), version 0.

Create or delete users' SCRAM credentials.

What each version changes (derived from the field ranges):

* v0: flexible from the start
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Int8, Int16, Int32
from kproto.schema import Array, Bytes, Field, Message, String

REQUEST = Message("AlterUserScramCredentialsRequest", api_key=51, valid="0", flexible="0+", fields=[
    Field("deletions", Array([
        Field("name", String),
        Field("mechanism", Int8),
    ])),
    Field("upsertions", Array([
        Field("name", String),
        Field("mechanism", Int8),
        Field("iterations", Int32),
        Field("salt", Bytes),
        Field("salted_password", Bytes),
    ])),
])

RESPONSE = Message("AlterUserScramCredentialsResponse", api_key=51, valid="0", flexible="0+", fields=[
    Field("throttle_time_ms", Int32),
    Field("results", Array([
        Field("user", String),
        Field("error_code", Int16),
        Field("error_message", String, nullable="0+"),
    ])),
])
