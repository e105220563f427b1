"""ListGroups (api key 16), versions 0-5.

The groups a broker coordinates, filtered by state (v4) and type (v5).

What each version changes (derived from the field ranges):

* v1: response adds ``throttle_time_ms``
* v2: same layout (new semantics or errors)
* v3: flexible (compact strings and arrays, tagged fields)
* v4: request adds ``states_filter``; response adds ``groups.group_state``
* v5: request adds ``types_filter``; response adds ``groups.group_type``
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Int16, Int32
from kproto.schema import Array, Field, Message, String

REQUEST = Message("ListGroupsRequest", api_key=16, valid="0-5", flexible="3+", fields=[
    Field("states_filter", Array(String), versions="4+"),
    Field("types_filter", Array(String), versions="5+"),
])

RESPONSE = Message("ListGroupsResponse", api_key=16, valid="0-5", flexible="3+", fields=[
    Field("throttle_time_ms", Int32, versions="1+"),
    Field("error_code", Int16),
    Field("groups", Array([
        Field("group_id", String),
        Field("protocol_type", String),
        Field("group_state", String, versions="4+"),
        Field("group_type", String, versions="5+"),
    ])),
])
