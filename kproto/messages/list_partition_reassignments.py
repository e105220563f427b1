"""ListPartitionReassignments (api key 46), version 0.

List ongoing partition reassignments.

What each version changes (derived from the field ranges):

* v0: flexible from the start
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Int16, Int32
from kproto.schema import Array, Field, Message, String

REQUEST = Message("ListPartitionReassignmentsRequest", api_key=46, valid="0", flexible="0+", fields=[
    Field("timeout_ms", Int32, default=60000),
    Field("topics", Array([
        Field("name", String),
        Field("partition_indexes", Array(Int32)),
    ]), nullable="0+", default=None),
])

RESPONSE = Message("ListPartitionReassignmentsResponse", api_key=46, valid="0", flexible="0+", fields=[
    Field("throttle_time_ms", Int32),
    Field("error_code", Int16),
    Field("error_message", String, nullable="0+"),
    Field("topics", Array([
        Field("name", String),
        Field("partitions", Array([
            Field("partition_index", Int32),
            Field("replicas", Array(Int32)),
            Field("adding_replicas", Array(Int32)),
            Field("removing_replicas", Array(Int32)),
        ])),
    ])),
])
