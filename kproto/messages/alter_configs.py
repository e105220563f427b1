"""AlterConfigs (api key 33), versions 0-2.

Replace the configs of resources (superseded by IncrementalAlterConfigs).

What each version changes (derived from the field ranges):

* v1: same layout (new semantics or errors)
* v2: flexible (compact strings and arrays, tagged fields)
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Boolean, Int8, Int16, Int32
from kproto.schema import Array, Field, Message, String

REQUEST = Message("AlterConfigsRequest", api_key=33, valid="0-2", flexible="2+", fields=[
    Field("resources", Array([
        Field("resource_type", Int8),
        Field("resource_name", String),
        Field("configs", Array([
            Field("name", String),
            Field("value", String, nullable="0+"),
        ])),
    ])),
    Field("validate_only", Boolean),
])

RESPONSE = Message("AlterConfigsResponse", api_key=33, valid="0-2", flexible="2+", fields=[
    Field("throttle_time_ms", Int32),
    Field("responses", Array([
        Field("error_code", Int16),
        Field("error_message", String, nullable="0+"),
        Field("resource_type", Int8),
        Field("resource_name", String),
    ])),
])
