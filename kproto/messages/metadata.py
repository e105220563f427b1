"""Metadata (api key 3): brokers, topics, partitions and their leaders.

In v0 an empty ``topics`` list means "all topics"; asking for an unknown
topic may auto-create it when the broker allows that.
"""

from __future__ import annotations

from kproto.primitives import Int16, Int32
from kproto.schema import Array, Field, Message, String

REQUEST = Message("MetadataRequest", api_key=3, valid="0", fields=[
    Field("topics", Array([
        Field("name", String),
    ])),
])

RESPONSE = Message("MetadataResponse", api_key=3, valid="0", fields=[
    Field("brokers", Array([
        Field("node_id", Int32),
        Field("host", String),
        Field("port", Int32),
    ])),
    Field("topics", Array([
        Field("error_code", Int16),
        Field("name", String),
        Field("partitions", Array([
            Field("error_code", Int16),
            Field("partition_index", Int32),
            Field("leader_id", Int32),
            Field("replica_nodes", Array(Int32)),
            Field("isr_nodes", Array(Int32)),
        ])),
    ])),
])
