"""JoinGroup (api key 11), versions 0-9.

Become a member of a classic consumer group. Every member sends the
protocols (assignors) it supports with its subscription as opaque metadata;
the coordinator picks one protocol and a leader, and answers the leader with
all members' metadata. From v4 a first join with an empty member id is
answered MEMBER_ID_REQUIRED (79) with an id to join with.

What each version changes (derived from the field ranges):

* v1: request adds ``rebalance_timeout_ms``
* v2: response adds ``throttle_time_ms``
* v3: same layout (new semantics or errors)
* v4: same layout (new semantics or errors)
* v5: request adds ``group_instance_id``; response adds ``members.group_instance_id``
* v6: flexible (compact strings and arrays, tagged fields)
* v7: response adds ``protocol_type``
* v8: request adds ``reason``
* v9: response adds ``skip_assignment``
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Boolean, Int16, Int32
from kproto.schema import Array, Bytes, Field, Message, String

REQUEST = Message("JoinGroupRequest", api_key=11, valid="0-9", flexible="6+", fields=[
    Field("group_id", String),
    Field("session_timeout_ms", Int32),
    Field("rebalance_timeout_ms", Int32, versions="1+", default=-1),
    Field("member_id", String),
    Field("group_instance_id", String, versions="5+", nullable="5+", default=None),
    Field("protocol_type", String),
    Field("protocols", Array([
        Field("name", String),
        Field("metadata", Bytes),
    ])),
    Field("reason", String, versions="8+", nullable="8+", default=None),
])

RESPONSE = Message("JoinGroupResponse", api_key=11, valid="0-9", flexible="6+", fields=[
    Field("throttle_time_ms", Int32, versions="2+"),
    Field("error_code", Int16),
    Field("generation_id", Int32, default=-1),
    Field("protocol_type", String, versions="7+", nullable="7+", default=None),
    Field("protocol_name", String, nullable="7+"),
    Field("leader", String),
    Field("skip_assignment", Boolean, versions="9+"),
    Field("member_id", String),
    Field("members", Array([
        Field("member_id", String),
        Field("group_instance_id", String, versions="5+", nullable="5+", default=None),
        Field("metadata", Bytes),
    ])),
])
