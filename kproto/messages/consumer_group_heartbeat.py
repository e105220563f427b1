"""ConsumerGroupHeartbeat (api key 68), versions 0-1.

The heartbeat of the consumer-group protocol of KIP-848: join, leave and
receive assignments in one call.

What each version changes (derived from the field ranges):

* v0: flexible from the start
* v1: request adds ``subscribed_topic_regex``
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Int16, Int32, Uuid
from kproto.schema import Array, Field, Message, Nested, String

REQUEST = Message("ConsumerGroupHeartbeatRequest", api_key=68, valid="0-1", flexible="0+", fields=[
    Field("group_id", String),
    Field("member_id", String),
    Field("member_epoch", Int32),
    Field("instance_id", String, nullable="0+", default=None),
    Field("rack_id", String, nullable="0+", default=None),
    Field("rebalance_timeout_ms", Int32, default=-1),
    Field("subscribed_topic_names", Array(String), nullable="0+", default=None),
    Field("subscribed_topic_regex", String, versions="1+", nullable="1+", default=None),
    Field("server_assignor", String, nullable="0+", default=None),
    Field("topic_partitions", Array([
        Field("topic_id", Uuid),
        Field("partitions", Array(Int32)),
    ]), nullable="0+", default=None),
])

RESPONSE = Message("ConsumerGroupHeartbeatResponse", api_key=68, valid="0-1", flexible="0+", fields=[
    Field("throttle_time_ms", Int32),
    Field("error_code", Int16),
    Field("error_message", String, nullable="0+", default=None),
    Field("member_id", String, nullable="0+", default=None),
    Field("member_epoch", Int32),
    Field("heartbeat_interval_ms", Int32),
    Field("assignment", Nested([
        Field("topic_partitions", Array([
            Field("topic_id", Uuid),
            Field("partitions", Array(Int32)),
        ])),
    ]), nullable="0+", default=None),
])
