"""DescribeProducers (api key 61), version 0.

Active producers of partitions (KIP-664).

What each version changes (derived from the field ranges):

* v0: flexible from the start
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Int16, Int32, Int64
from kproto.schema import Array, Field, Message, String

REQUEST = Message("DescribeProducersRequest", api_key=61, valid="0", flexible="0+", fields=[
    Field("topics", Array([
        Field("name", String),
        Field("partition_indexes", Array(Int32)),
    ])),
])

RESPONSE = Message("DescribeProducersResponse", api_key=61, valid="0", flexible="0+", fields=[
    Field("throttle_time_ms", Int32),
    Field("topics", Array([
        Field("name", String),
        Field("partitions", Array([
            Field("partition_index", Int32),
            Field("error_code", Int16),
            Field("error_message", String, nullable="0+", default=None),
            Field("active_producers", Array([
                Field("producer_id", Int64),
                Field("producer_epoch", Int32),
                Field("last_sequence", Int32, default=-1),
                Field("last_timestamp", Int64, default=-1),
                Field("coordinator_epoch", Int32),
                Field("current_txn_start_offset", Int64, default=-1),
            ])),
        ])),
    ])),
])
