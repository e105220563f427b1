"""JoinGroup (api key 11): become a member of a consumer group.

Every member sends the protocols (assignors) it supports with its
subscription as opaque metadata; the coordinator picks one protocol and a
leader, and answers the leader with all members' metadata.  v1 adds the
rebalance timeout, v2 throttle time; from v4 a first join with an empty
member id is answered MEMBER_ID_REQUIRED (79) with an assigned id to join
with; v5 adds static membership (``group_instance_id``).  v6 is flexible.
"""

from __future__ import annotations

from kproto.primitives import Int16, Int32
from kproto.schema import Array, Bytes, Field, Message, String

REQUEST = Message("JoinGroupRequest", api_key=11, valid="0-5", fields=[
    Field("group_id", String),
    Field("session_timeout_ms", Int32),
    Field("rebalance_timeout_ms", Int32, versions="1+"),
    Field("member_id", String),
    Field("group_instance_id", String, versions="5+", nullable="5+"),
    Field("protocol_type", String, about='"consumer" for consumer groups'),
    Field("protocols", Array([
        Field("name", String),
        Field("metadata", Bytes),
    ])),
])

RESPONSE = Message("JoinGroupResponse", api_key=11, valid="0-5", fields=[
    Field("throttle_time_ms", Int32, versions="2+"),
    Field("error_code", Int16),
    Field("generation_id", Int32),
    Field("protocol_name", String),
    Field("leader", String),
    Field("member_id", String),
    Field("members", Array([
        Field("member_id", String),
        Field("group_instance_id", String, versions="5+", nullable="5+"),
        Field("metadata", Bytes),
    ])),
])
