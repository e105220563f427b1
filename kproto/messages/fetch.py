"""Fetch (api key 1): read record sets from partitions, with long-poll.

``max_wait_ms``/``min_bytes`` make the broker hold the request until enough
data arrived; ``partition_max_bytes`` bounds each partition's record set,
which may therefore end with a partial message that readers must skip.
"""

from __future__ import annotations

from kproto.primitives import Int16, Int32, Int64
from kproto.schema import Array, Field, Message, Records, String

REQUEST = Message("FetchRequest", api_key=1, valid="0", fields=[
    Field("replica_id", Int32),
    Field("max_wait_ms", Int32),
    Field("min_bytes", Int32),
    Field("topics", Array([
        Field("topic", String),
        Field("partitions", Array([
            Field("partition", Int32),
            Field("fetch_offset", Int64),
            Field("partition_max_bytes", Int32),
        ])),
    ])),
])

RESPONSE = Message("FetchResponse", api_key=1, valid="0", fields=[
    Field("responses", Array([
        Field("topic", String),
        Field("partitions", Array([
            Field("partition_index", Int32),
            Field("error_code", Int16),
            Field("high_watermark", Int64),
            Field("records", Records, nullable="0+"),
        ])),
    ])),
])
