"""DescribeGroups (api key 15), versions 0-6.

State, protocol and members of classic groups. ``protocol_data`` is the
chosen assignor's name; member metadata and assignments are the opaque bytes
exchanged in JoinGroup/SyncGroup.

What each version changes (derived from the field ranges):

* v1: response adds ``throttle_time_ms``
* v2: same layout (new semantics or errors)
* v3: request adds ``include_authorized_operations``; response adds ``groups.authorized_operations``
* v4: response adds ``groups.members.group_instance_id``
* v5: flexible (compact strings and arrays, tagged fields)
* v6: response adds ``groups.error_message``
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Boolean, Int16, Int32
from kproto.schema import Array, Bytes, Field, Message, String

REQUEST = Message("DescribeGroupsRequest", api_key=15, valid="0-6", flexible="5+", fields=[
    Field("groups", Array(String)),
    Field("include_authorized_operations", Boolean, versions="3+"),
])

RESPONSE = Message("DescribeGroupsResponse", api_key=15, valid="0-6", flexible="5+", fields=[
    Field("throttle_time_ms", Int32, versions="1+"),
    Field("groups", Array([
        Field("error_code", Int16),
        Field("error_message", String, versions="6+", nullable="6+", default=None),
        Field("group_id", String),
        Field("group_state", String),
        Field("protocol_type", String),
        Field("protocol_data", String),
        Field("members", Array([
            Field("member_id", String),
            Field("group_instance_id", String, versions="4+", nullable="4+", default=None),
            Field("client_id", String),
            Field("client_host", String),
            Field("member_metadata", Bytes),
            Field("member_assignment", Bytes),
        ])),
        Field("authorized_operations", Int32, versions="3+", default=-2147483648),
    ])),
])
