"""TxnOffsetCommit (api key 28), versions 0-5.

Commit consumer offsets as part of a transaction.

What each version changes (derived from the field ranges):

* v1: same layout (new semantics or errors)
* v2: request adds ``topics.partitions.committed_leader_epoch``
* v3: flexible (compact strings and arrays, tagged fields); request adds ``generation_id``, ``member_id``, ``group_instance_id``
* v4: same layout (new semantics or errors)
* v5: same layout (new semantics or errors)
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Int16, Int32, Int64
from kproto.schema import Array, Field, Message, String

REQUEST = Message("TxnOffsetCommitRequest", api_key=28, valid="0-5", flexible="3+", fields=[
    Field("transactional_id", String),
    Field("group_id", String),
    Field("producer_id", Int64),
    Field("producer_epoch", Int16),
    Field("generation_id", Int32, versions="3+", default=-1),
    Field("member_id", String, versions="3+"),
    Field("group_instance_id", String, versions="3+", nullable="3+", default=None),
    Field("topics", Array([
        Field("name", String),
        Field("partitions", Array([
            Field("partition_index", Int32),
            Field("committed_offset", Int64),
            Field("committed_leader_epoch", Int32, versions="2+", default=-1),
            Field("committed_metadata", String, nullable="0+"),
        ])),
    ])),
])

RESPONSE = Message("TxnOffsetCommitResponse", api_key=28, valid="0-5", flexible="3+", fields=[
    Field("throttle_time_ms", Int32),
    Field("topics", Array([
        Field("name", String),
        Field("partitions", Array([
            Field("partition_index", Int32),
            Field("error_code", Int16),
        ])),
    ])),
])
