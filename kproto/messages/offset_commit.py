"""OffsetCommit (api key 8): store a consumer group's positions.

v0 stored offsets in ZooKeeper, v1 in Kafka and added the group generation,
the member id and a per-partition commit timestamp (-1: broker time); v2-v4
replace the timestamp by a request-wide retention time, v3 adds throttle
time, v6 leader epochs, v7 the static member's instance id.  v8 is flexible.
Kafka now calls ``generation_id`` "GenerationIdOrMemberEpoch"; the
consumer-group generation is what every version up to 7 carries.
"""

from __future__ import annotations

from kproto.primitives import Int16, Int32, Int64
from kproto.schema import Array, Field, Message, String

REQUEST = Message("OffsetCommitRequest", api_key=8, valid="0-7", fields=[
    Field("group_id", String),
    Field("generation_id", Int32, versions="1+"),
    Field("member_id", String, versions="1+"),
    Field("group_instance_id", String, versions="7+", nullable="7+"),
    Field("retention_time_ms", Int64, versions="2-4", about="-1: the broker's retention"),
    Field("topics", Array([
        Field("name", String),
        Field("partitions", Array([
            Field("partition_index", Int32),
            Field("committed_offset", Int64),
            Field("committed_leader_epoch", Int32, versions="6+"),
            Field("commit_timestamp", Int64, versions="1"),
            Field("committed_metadata", String, nullable="0+"),
        ])),
    ])),
])

RESPONSE = Message("OffsetCommitResponse", api_key=8, valid="0-7", fields=[
    Field("throttle_time_ms", Int32, versions="3+"),
    Field("topics", Array([
        Field("name", String),
        Field("partitions", Array([
            Field("partition_index", Int32),
            Field("error_code", Int16),
        ])),
    ])),
])
