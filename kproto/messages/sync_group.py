"""SyncGroup (api key 14), versions 0-5.

Hand out the leader's partition assignment: the leader sends every member's
assignment; every member (leader included) receives its own.

What each version changes (derived from the field ranges):

* v1: response adds ``throttle_time_ms``
* v2: same layout (new semantics or errors)
* v3: request adds ``group_instance_id``
* v4: flexible (compact strings and arrays, tagged fields)
* v5: request adds ``protocol_type``, ``protocol_name``; response adds ``protocol_type``, ``protocol_name``
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Int16, Int32
from kproto.schema import Array, Bytes, Field, Message, String

REQUEST = Message("SyncGroupRequest", api_key=14, valid="0-5", flexible="4+", fields=[
    Field("group_id", String),
    Field("generation_id", Int32),
    Field("member_id", String),
    Field("group_instance_id", String, versions="3+", nullable="3+", default=None),
    Field("protocol_type", String, versions="5+", nullable="5+", default=None),
    Field("protocol_name", String, versions="5+", nullable="5+", default=None),
    Field("assignments", Array([
        Field("member_id", String),
        Field("assignment", Bytes),
    ])),
])

RESPONSE = Message("SyncGroupResponse", api_key=14, valid="0-5", flexible="4+", fields=[
    Field("throttle_time_ms", Int32, versions="1+"),
    Field("error_code", Int16),
    Field("protocol_type", String, versions="5+", nullable="5+", default=None),
    Field("protocol_name", String, versions="5+", nullable="5+", default=None),
    Field("assignment", Bytes),
])
