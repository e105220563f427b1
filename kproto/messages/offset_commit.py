"""OffsetCommit (api key 8): store a consumer group's positions.

v0 stored offsets in ZooKeeper, v1 in Kafka and added the group generation,
the member id and a per-partition commit timestamp (-1: broker time).
"""

from __future__ import annotations

from kproto.primitives import Int16, Int32, Int64
from kproto.schema import Array, Field, Message, String

REQUEST = Message("OffsetCommitRequest", api_key=8, valid="0-1", fields=[
    Field("group_id", String),
    Field("generation_id", Int32, versions="1+"),
    Field("member_id", String, versions="1+"),
    Field("topics", Array([
        Field("name", String),
        Field("partitions", Array([
            Field("partition_index", Int32),
            Field("committed_offset", Int64),
            Field("commit_timestamp", Int64, versions="1"),
            Field("committed_metadata", String, nullable="0+"),
        ])),
    ])),
])

RESPONSE = Message("OffsetCommitResponse", api_key=8, valid="0-1", fields=[
    Field("topics", Array([
        Field("name", String),
        Field("partitions", Array([
            Field("partition_index", Int32),
            Field("error_code", Int16),
        ])),
    ])),
])
