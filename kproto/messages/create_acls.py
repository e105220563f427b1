"""CreateAcls (api key 30), versions 1-3.

Create ACLs.

What each version changes (derived from the field ranges):

* v2: flexible (compact strings and arrays, tagged fields)
* v3: same layout (new semantics or errors)
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Int8, Int16, Int32
from kproto.schema import Array, Field, Message, String

REQUEST = Message("CreateAclsRequest", api_key=30, valid="1-3", flexible="2+", fields=[
    Field("creations", Array([
        Field("resource_type", Int8),
        Field("resource_name", String),
        Field("resource_pattern_type", Int8, versions="1+", default=3),
        Field("principal", String),
        Field("host", String),
        Field("operation", Int8),
        Field("permission_type", Int8),
    ])),
])

RESPONSE = Message("CreateAclsResponse", api_key=30, valid="1-3", flexible="2+", fields=[
    Field("throttle_time_ms", Int32),
    Field("results", Array([
        Field("error_code", Int16),
        Field("error_message", String, nullable="0+"),
    ])),
])
