"""DescribeTopicPartitions (api key 75), version 0.

Topic and partition metadata, paginated (KIP-966).

What each version changes (derived from the field ranges):

* v0: flexible from the start
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Boolean, Int16, Int32, Uuid
from kproto.schema import Array, Field, Message, Nested, String

REQUEST = Message("DescribeTopicPartitionsRequest", api_key=75, valid="0", flexible="0+", fields=[
    Field("topics", Array([
        Field("name", String),
    ])),
    Field("response_partition_limit", Int32, default=2000),
    Field("cursor", Nested([
        Field("topic_name", String),
        Field("partition_index", Int32),
    ]), nullable="0+", default=None),
])

RESPONSE = Message("DescribeTopicPartitionsResponse", api_key=75, valid="0", flexible="0+", fields=[
    Field("throttle_time_ms", Int32),
    Field("topics", Array([
        Field("error_code", Int16),
        Field("name", String, nullable="0+"),
        Field("topic_id", Uuid),
        Field("is_internal", Boolean),
        Field("partitions", Array([
            Field("error_code", Int16),
            Field("partition_index", Int32),
            Field("leader_id", Int32),
            Field("leader_epoch", Int32, default=-1),
            Field("replica_nodes", Array(Int32)),
            Field("isr_nodes", Array(Int32)),
            Field("eligible_leader_replicas", Array(Int32), nullable="0+", default=None),
            Field("last_known_elr", Array(Int32), nullable="0+", default=None),
            Field("offline_replicas", Array(Int32)),
        ])),
        Field("topic_authorized_operations", Int32, default=-2147483648),
    ])),
    Field("next_cursor", Nested([
        Field("topic_name", String),
        Field("partition_index", Int32),
    ]), nullable="0+", default=None),
])
