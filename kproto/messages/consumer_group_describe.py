"""ConsumerGroupDescribe (api key 69), versions 0-1.

Describe consumer groups of the KIP-848 protocol.

What each version changes (derived from the field ranges):

* v0: flexible from the start
* v1: response adds ``groups.members.member_type``
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Boolean, Int8, Int16, Int32, Uuid
from kproto.schema import Array, Field, Message, Nested, String

REQUEST = Message("ConsumerGroupDescribeRequest", api_key=69, valid="0-1", flexible="0+", fields=[
    Field("group_ids", Array(String)),
    Field("include_authorized_operations", Boolean),
])

RESPONSE = Message("ConsumerGroupDescribeResponse", api_key=69, valid="0-1", flexible="0+", fields=[
    Field("throttle_time_ms", Int32),
    Field("groups", Array([
        Field("error_code", Int16),
        Field("error_message", String, nullable="0+", default=None),
        Field("group_id", String),
        Field("group_state", String),
        Field("group_epoch", Int32),
        Field("assignment_epoch", Int32),
        Field("assignor_name", String),
        Field("members", Array([
            Field("member_id", String),
            Field("instance_id", String, nullable="0+", default=None),
            Field("rack_id", String, nullable="0+", default=None),
            Field("member_epoch", Int32),
            Field("client_id", String),
            Field("client_host", String),
            Field("subscribed_topic_names", Array(String)),
            Field("subscribed_topic_regex", String, nullable="0+", default=None),
            Field("assignment", Nested([
                Field("topic_partitions", Array([
                    Field("topic_id", Uuid),
                    Field("topic_name", String),
                    Field("partitions", Array(Int32)),
                ])),
            ])),
            Field("target_assignment", Nested([
                Field("topic_partitions", Array([
                    Field("topic_id", Uuid),
                    Field("topic_name", String),
                    Field("partitions", Array(Int32)),
                ])),
            ])),
            Field("member_type", Int8, versions="1+", default=-1),
        ])),
        Field("authorized_operations", Int32, default=-2147483648),
    ])),
])
