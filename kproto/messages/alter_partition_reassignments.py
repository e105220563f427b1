"""AlterPartitionReassignments (api key 45), versions 0-1.

Start or cancel partition replica reassignments.

What each version changes (derived from the field ranges):

* v0: flexible from the start
* v1: request adds ``allow_replication_factor_change``; response adds ``allow_replication_factor_change``
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Boolean, Int16, Int32
from kproto.schema import Array, Field, Message, String

REQUEST = Message("AlterPartitionReassignmentsRequest", api_key=45, valid="0-1", flexible="0+", fields=[
    Field("timeout_ms", Int32, default=60000),
    Field("allow_replication_factor_change", Boolean, versions="1+", default=True),
    Field("topics", Array([
        Field("name", String),
        Field("partitions", Array([
            Field("partition_index", Int32),
            Field("replicas", Array(Int32), nullable="0+", default=None),
        ])),
    ])),
])

RESPONSE = Message("AlterPartitionReassignmentsResponse", api_key=45, valid="0-1", flexible="0+", fields=[
    Field("throttle_time_ms", Int32),
    Field("allow_replication_factor_change", Boolean, versions="1+", default=True),
    Field("error_code", Int16),
    Field("error_message", String, nullable="0+"),
    Field("responses", Array([
        Field("name", String),
        Field("partitions", Array([
            Field("partition_index", Int32),
            Field("error_code", Int16),
            Field("error_message", String, nullable="0+"),
        ])),
    ])),
])
