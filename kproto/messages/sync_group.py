"""SyncGroup (api key 14): hand out the leader's partition assignment.

The leader sends every member's assignment; every member (leader included)
receives its own.  v1 adds throttle time, v3 static membership.  v4 is
flexible.
"""

from __future__ import annotations

from kproto.primitives import Int16, Int32
from kproto.schema import Array, Bytes, Field, Message, String

REQUEST = Message("SyncGroupRequest", api_key=14, valid="0-3", fields=[
    Field("group_id", String),
    Field("generation_id", Int32),
    Field("member_id", String),
    Field("group_instance_id", String, versions="3+", nullable="3+"),
    Field("assignments", Array([
        Field("member_id", String),
        Field("assignment", Bytes),
    ])),
])

RESPONSE = Message("SyncGroupResponse", api_key=14, valid="0-3", fields=[
    Field("throttle_time_ms", Int32, versions="1+"),
    Field("error_code", Int16),
    Field("assignment", Bytes),
])
