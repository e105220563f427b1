"""ListOffsets (api key 2), versions 0-11.

Offsets by time ("Offsets" in Kafka 0.8). ``timestamp`` -1 asks for the
latest offset (the next one to be written), -2 for the earliest; v0 answers
up to ``max_num_offsets`` segment-start offsets at or before the time,
newest first; from v1 one offset and its timestamp.

What each version changes (derived from the field ranges):

* v1: request drops ``topics.partitions.max_num_offsets``; response adds ``topics.partitions.timestamp``, ``topics.partitions.offset``; response drops ``topics.partitions.old_style_offsets``
* v2: request adds ``isolation_level``; response adds ``throttle_time_ms``
* v3: same layout (new semantics or errors)
* v4: request adds ``topics.partitions.current_leader_epoch``; response adds ``topics.partitions.leader_epoch``
* v5: same layout (new semantics or errors)
* v6: flexible (compact strings and arrays, tagged fields)
* v7: same layout (new semantics or errors)
* v8: same layout (new semantics or errors)
* v9: same layout (new semantics or errors)
* v10: request adds ``timeout_ms``
* v11: same layout (new semantics or errors)
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Int8, Int16, Int32, Int64
from kproto.schema import Array, Field, Message, String

LATEST_TIMESTAMP = -1  # the next offset to be written
EARLIEST_TIMESTAMP = -2  # the log start offset

REQUEST = Message("ListOffsetsRequest", api_key=2, valid="0-11", flexible="6+", fields=[
    Field("replica_id", Int32),
    Field("isolation_level", Int8, versions="2+"),
    Field("topics", Array([
        Field("name", String),
        Field("partitions", Array([
            Field("partition_index", Int32),
            Field("current_leader_epoch", Int32, versions="4+", default=-1),
            Field("timestamp", Int64),
            Field("max_num_offsets", Int32, versions="0", default=1),
        ])),
    ])),
    Field("timeout_ms", Int32, versions="10+"),
])

RESPONSE = Message("ListOffsetsResponse", api_key=2, valid="0-11", flexible="6+", fields=[
    Field("throttle_time_ms", Int32, versions="2+"),
    Field("topics", Array([
        Field("name", String),
        Field("partitions", Array([
            Field("partition_index", Int32),
            Field("error_code", Int16),
            Field("old_style_offsets", Array(Int64), versions="0"),
            Field("timestamp", Int64, versions="1+", default=-1),
            Field("offset", Int64, versions="1+", default=-1),
            Field("leader_epoch", Int32, versions="4+", default=-1),
        ])),
    ])),
])
