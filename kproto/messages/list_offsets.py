"""ListOffsets (api key 2; "Offsets" in Kafka 0.8): offsets by time.

``timestamp`` -1 asks for the latest offset (the next one to be written),
-2 for the earliest; v0 answers up to ``max_num_offsets`` segment-start
offsets at or before the time, newest first.  From v1 one offset and its
timestamp are answered; v2 adds the isolation level and throttle time, v4
leader epochs.  v6 is flexible.
"""

from __future__ import annotations

from kproto.primitives import Int8, Int16, Int32, Int64
from kproto.schema import Array, Field, Message, String

LATEST_TIMESTAMP = -1
EARLIEST_TIMESTAMP = -2

REQUEST = Message("ListOffsetsRequest", api_key=2, valid="0-5", fields=[
    Field("replica_id", Int32),
    Field("isolation_level", Int8, versions="2+"),
    Field("topics", Array([
        Field("name", String),
        Field("partitions", Array([
            Field("partition_index", Int32),
            Field("current_leader_epoch", Int32, versions="4+"),
            Field("timestamp", Int64),
            Field("max_num_offsets", Int32, versions="0"),
        ])),
    ])),
])

RESPONSE = Message("ListOffsetsResponse", api_key=2, valid="0-5", fields=[
    Field("throttle_time_ms", Int32, versions="2+"),
    Field("topics", Array([
        Field("name", String),
        Field("partitions", Array([
            Field("partition_index", Int32),
            Field("error_code", Int16),
            Field("old_style_offsets", Array(Int64), versions="0"),
            Field("timestamp", Int64, versions="1+"),
            Field("offset", Int64, versions="1+"),
            Field("leader_epoch", Int32, versions="4+"),
        ])),
    ])),
])
