"""AlterClientQuotas (api key 49), versions 0-1.

Alter client quotas.

What each version changes (derived from the field ranges):

* v1: flexible (compact strings and arrays, tagged fields)
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Boolean, Float64, Int16, Int32
from kproto.schema import Array, Field, Message, String

REQUEST = Message("AlterClientQuotasRequest", api_key=49, valid="0-1", flexible="1+", fields=[
    Field("entries", Array([
        Field("entity", Array([
            Field("entity_type", String),
            Field("entity_name", String, nullable="0+"),
        ])),
        Field("ops", Array([
            Field("key", String),
            Field("value", Float64),
            Field("remove", Boolean),
        ])),
    ])),
    Field("validate_only", Boolean),
])

RESPONSE = Message("AlterClientQuotasResponse", api_key=49, valid="0-1", flexible="1+", fields=[
    Field("throttle_time_ms", Int32),
    Field("entries", Array([
        Field("error_code", Int16),
        Field("error_message", String, nullable="0+"),
        Field("entity", Array([
            Field("entity_type", String),
            Field("entity_name", String, nullable="0+"),
        ])),
    ])),
])
