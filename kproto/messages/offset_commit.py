"""OffsetCommit (api key 8), versions 0-10.

Store a consumer group's positions. v0 stored offsets in ZooKeeper, v1 in
Kafka with a per-partition commit timestamp (-1: broker time); v2-v4 replace
it by a request-wide retention time. Kafka now calls ``generation_id``
"GenerationIdOrMemberEpoch" (the member epoch of the KIP-848 protocol from
v9); kproto keeps the older name.

What each version changes (derived from the field ranges):

* v1: request adds ``generation_id``, ``member_id``, ``topics.partitions.commit_timestamp``
* v2: request adds ``retention_time_ms``; request drops ``topics.partitions.commit_timestamp``
* v3: response adds ``throttle_time_ms``
* v4: same layout (new semantics or errors)
* v5: request drops ``retention_time_ms``
* v6: request adds ``topics.partitions.committed_leader_epoch``
* v7: request adds ``group_instance_id``
* v8: flexible (compact strings and arrays, tagged fields)
* v9: same layout (new semantics or errors)
* v10: request adds ``topics.topic_id``; request drops ``topics.name``; response adds ``topics.topic_id``; response drops ``topics.name``
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Int16, Int32, Int64, Uuid
from kproto.schema import Array, Field, Message, String

REQUEST = Message("OffsetCommitRequest", api_key=8, valid="0-10", flexible="8+", fields=[
    Field("group_id", String),
    Field("generation_id", Int32, versions="1+", default=-1),
    Field("member_id", String, versions="1+"),
    Field("group_instance_id", String, versions="7+", nullable="7+", default=None),
    Field("retention_time_ms", Int64, versions="2-4", default=-1),
    Field("topics", Array([
        Field("name", String, versions="0-9"),
        Field("topic_id", Uuid, versions="10+"),
        Field("partitions", Array([
            Field("partition_index", Int32),
            Field("committed_offset", Int64),
            Field("committed_leader_epoch", Int32, versions="6+", default=-1),
            Field("commit_timestamp", Int64, versions="1", default=-1),
            Field("committed_metadata", String, nullable="0+"),
        ])),
    ])),
])

RESPONSE = Message("OffsetCommitResponse", api_key=8, valid="0-10", flexible="8+", fields=[
    Field("throttle_time_ms", Int32, versions="3+"),
    Field("topics", Array([
        Field("name", String, versions="0-9"),
        Field("topic_id", Uuid, versions="10+"),
        Field("partitions", Array([
            Field("partition_index", Int32),
            Field("error_code", Int16),
        ])),
    ])),
])
