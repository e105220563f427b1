"""LeaveGroup (api key 13): members leave a group without waiting for a timeout.

v1 adds throttle time; v3 turns the single ``member_id`` into a batch of
members (with static instance ids) and answers per member.  v4 is flexible.
"""

from __future__ import annotations

from kproto.primitives import Int16, Int32
from kproto.schema import Array, Field, Message, String

REQUEST = Message("LeaveGroupRequest", api_key=13, valid="0-3", fields=[
    Field("group_id", String),
    Field("member_id", String, versions="0-2"),
    Field("members", Array([
        Field("member_id", String),
        Field("group_instance_id", String, nullable="3+"),
    ]), versions="3+"),
])

RESPONSE = Message("LeaveGroupResponse", api_key=13, valid="0-3", fields=[
    Field("throttle_time_ms", Int32, versions="1+"),
    Field("error_code", Int16),
    Field("members", Array([
        Field("member_id", String),
        Field("group_instance_id", String, nullable="3+"),
        Field("error_code", Int16),
    ]), versions="3+"),
])
