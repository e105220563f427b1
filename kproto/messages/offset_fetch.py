"""OffsetFetch (api key 9): read a consumer group's committed positions.

v0 reads offsets committed with OffsetCommit v0, v1 those committed with v1;
the wire layout of both is the same.  -1 means "nothing committed".
"""

from __future__ import annotations

from kproto.primitives import Int16, Int32, Int64
from kproto.schema import Array, Field, Message, String

REQUEST = Message("OffsetFetchRequest", api_key=9, valid="0-1", fields=[
    Field("group_id", String),
    Field("topics", Array([
        Field("name", String),
        Field("partition_indexes", Array(Int32)),
    ])),
])

RESPONSE = Message("OffsetFetchResponse", api_key=9, valid="0-1", fields=[
    Field("topics", Array([
        Field("name", String),
        Field("partitions", Array([
            Field("partition_index", Int32),
            Field("committed_offset", Int64),
            Field("metadata", String, nullable="0+"),
            Field("error_code", Int16),
        ])),
    ])),
])
