"""Heartbeat (api key 12): a group member is alive; the answer says rebalance.

REBALANCE_IN_PROGRESS (27) in the answer tells the member to join again.
v1 adds throttle time, v3 static membership.  v4 is flexible.
"""

from __future__ import annotations

from kproto.primitives import Int16, Int32
from kproto.schema import Field, Message, String

REQUEST = Message("HeartbeatRequest", api_key=12, valid="0-3", fields=[
    Field("group_id", String),
    Field("generation_id", Int32),
    Field("member_id", String),
    Field("group_instance_id", String, versions="3+", nullable="3+"),
])

RESPONSE = Message("HeartbeatResponse", api_key=12, valid="0-3", fields=[
    Field("throttle_time_ms", Int32, versions="1+"),
    Field("error_code", Int16),
])
