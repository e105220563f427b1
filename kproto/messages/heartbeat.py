"""Heartbeat (api key 12), versions 0-4.

A classic group member is alive; REBALANCE_IN_PROGRESS (27) in the answer
tells it to join again.

What each version changes (derived from the field ranges):

* v1: response adds ``throttle_time_ms``
* v2: same layout (new semantics or errors)
* v3: request adds ``group_instance_id``
* v4: flexible (compact strings and arrays, tagged fields)
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Int16, Int32
from kproto.schema import Field, Message, String

REQUEST = Message("HeartbeatRequest", api_key=12, valid="0-4", flexible="4+", fields=[
    Field("group_id", String),
    Field("generation_id", Int32),
    Field("member_id", String),
    Field("group_instance_id", String, versions="3+", nullable="3+", default=None),
])

RESPONSE = Message("HeartbeatResponse", api_key=12, valid="0-4", flexible="4+", fields=[
    Field("throttle_time_ms", Int32, versions="1+"),
    Field("error_code", Int16),
])
