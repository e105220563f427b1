"""LeaveGroup (api key 13), versions 0-5.

Members leave a classic group without waiting for a session timeout; from v3
in a batch, answered per member.

What each version changes (derived from the field ranges):

* v1: response adds ``throttle_time_ms``
* v2: same layout (new semantics or errors)
* v3: request adds ``members``; request drops ``member_id``; response adds ``members``
* v4: flexible (compact strings and arrays, tagged fields)
* v5: request adds ``members.reason``
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Int16, Int32
from kproto.schema import Array, Field, Message, String

REQUEST = Message("LeaveGroupRequest", api_key=13, valid="0-5", flexible="4+", fields=[
    Field("group_id", String),
    Field("member_id", String, versions="0-2"),
    Field("members", Array([
        Field("member_id", String, versions="3+"),
        Field("group_instance_id", String, versions="3+", nullable="3+", default=None),
        Field("reason", String, versions="5+", nullable="5+", default=None),
    ]), versions="3+"),
])

RESPONSE = Message("LeaveGroupResponse", api_key=13, valid="0-5", flexible="4+", fields=[
    Field("throttle_time_ms", Int32, versions="1+"),
    Field("error_code", Int16),
    Field("members", Array([
        Field("member_id", String, versions="3+"),
        Field("group_instance_id", String, versions="3+", nullable="3+"),
        Field("error_code", Int16, versions="3+"),
    ]), versions="3+"),
])
