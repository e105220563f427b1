"""CreatePartitions (api key 37), versions 0-3.

Add partitions to existing topics.

What each version changes (derived from the field ranges):

* v1: same layout (new semantics or errors)
* v2: flexible (compact strings and arrays, tagged fields)
* v3: same layout (new semantics or errors)
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Boolean, Int16, Int32
from kproto.schema import Array, Field, Message, String

REQUEST = Message("CreatePartitionsRequest", api_key=37, valid="0-3", flexible="2+", fields=[
    Field("topics", Array([
        Field("name", String),
        Field("count", Int32),
        Field("assignments", Array([
            Field("broker_ids", Array(Int32)),
        ]), nullable="0+"),
    ])),
    Field("timeout_ms", Int32),
    Field("validate_only", Boolean),
])

RESPONSE = Message("CreatePartitionsResponse", api_key=37, valid="0-3", flexible="2+", fields=[
    Field("throttle_time_ms", Int32),
    Field("results", Array([
        Field("name", String),
        Field("error_code", Int16),
        Field("error_message", String, nullable="0+", default=None),
    ])),
])
