"""OffsetForLeaderEpoch (api key 23), versions 2-4.

The end offset of a leader epoch: how a consumer (or follower) finds where
its log diverged after a leader change (KIP-320).

What each version changes (derived from the field ranges):

* v3: request adds ``replica_id``
* v4: flexible (compact strings and arrays, tagged fields)
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Int16, Int32, Int64
from kproto.schema import Array, Field, Message, String

REQUEST = Message("OffsetForLeaderEpochRequest", api_key=23, valid="2-4", flexible="4+", fields=[
    Field("replica_id", Int32, versions="3+", default=-2),
    Field("topics", Array([
        Field("topic", String),
        Field("partitions", Array([
            Field("partition", Int32),
            Field("current_leader_epoch", Int32, versions="2+", default=-1),
            Field("leader_epoch", Int32),
        ])),
    ])),
])

RESPONSE = Message("OffsetForLeaderEpochResponse", api_key=23, valid="2-4", flexible="4+", fields=[
    Field("throttle_time_ms", Int32, versions="2+"),
    Field("topics", Array([
        Field("topic", String),
        Field("partitions", Array([
            Field("error_code", Int16),
            Field("partition", Int32),
            Field("leader_epoch", Int32, versions="1+", default=-1),
            Field("end_offset", Int64, default=-1),
        ])),
    ])),
])
