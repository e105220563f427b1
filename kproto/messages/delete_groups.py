"""DeleteGroups (api key 42), versions 0-2.

Delete classic consumer groups.

What each version changes (derived from the field ranges):

* v1: same layout (new semantics or errors)
* v2: flexible (compact strings and arrays, tagged fields)
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Int16, Int32
from kproto.schema import Array, Field, Message, String

REQUEST = Message("DeleteGroupsRequest", api_key=42, valid="0-2", flexible="2+", fields=[
    Field("groups_names", Array(String)),
])

RESPONSE = Message("DeleteGroupsResponse", api_key=42, valid="0-2", flexible="2+", fields=[
    Field("throttle_time_ms", Int32),
    Field("results", Array([
        Field("group_id", String),
        Field("error_code", Int16),
    ])),
])
