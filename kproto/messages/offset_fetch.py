"""OffsetFetch (api key 9): read a consumer group's committed positions.

v0 reads offsets committed with OffsetCommit v0, v1 those committed with v1;
the wire layout of both is the same.  -1 means "nothing committed".  v2
allows a null topic list ("all topics of the group") and adds a top-level
error code, v3 throttle time, v5 leader epochs.  v6 is flexible.
"""

from __future__ import annotations

from kproto.primitives import Int16, Int32, Int64
from kproto.schema import Array, Field, Message, String

REQUEST = Message("OffsetFetchRequest", api_key=9, valid="0-5", fields=[
    Field("group_id", String),
    Field("topics", Array([
        Field("name", String),
        Field("partition_indexes", Array(Int32)),
    ]), nullable="2+"),
])

RESPONSE = Message("OffsetFetchResponse", api_key=9, valid="0-5", fields=[
    Field("throttle_time_ms", Int32, versions="3+"),
    Field("topics", Array([
        Field("name", String),
        Field("partitions", Array([
            Field("partition_index", Int32),
            Field("committed_offset", Int64),
            Field("committed_leader_epoch", Int32, versions="5+"),
            Field("metadata", String, nullable="0+"),
            Field("error_code", Int16),
        ])),
    ])),
    Field("error_code", Int16, versions="2+"),
])
