"""Fetch (api key 1): read record sets from partitions, with long-poll.

``max_wait_ms``/``min_bytes`` make the broker hold the request until enough
data arrived; ``partition_max_bytes`` bounds each partition's record set,
which may therefore end with a partial message that readers must skip.
v1 adds throttle time, v3 a response-wide ``max_bytes``, v4 the isolation
level with last stable offset and aborted transactions (magic 2), v5 log
start offsets, v7 incremental fetch sessions, v9 leader epochs, v11 the
rack of the consumer and a preferred read replica.  v12 is flexible.
"""

from __future__ import annotations

from kproto.primitives import Int8, Int16, Int32, Int64
from kproto.schema import Array, Field, Message, Records, String

REQUEST = Message("FetchRequest", api_key=1, valid="0-11", fields=[
    Field("replica_id", Int32),
    Field("max_wait_ms", Int32),
    Field("min_bytes", Int32),
    Field("max_bytes", Int32, versions="3+"),
    Field("isolation_level", Int8, versions="4+", about="0 read_uncommitted, 1 read_committed"),
    Field("session_id", Int32, versions="7+"),
    Field("session_epoch", Int32, versions="7+"),
    Field("topics", Array([
        Field("topic", String),
        Field("partitions", Array([
            Field("partition", Int32),
            Field("current_leader_epoch", Int32, versions="9+"),
            Field("fetch_offset", Int64),
            Field("log_start_offset", Int64, versions="5+", about="followers only; -1 from consumers"),
            Field("partition_max_bytes", Int32),
        ])),
    ])),
    Field("forgotten_topics_data", Array([
        Field("topic", String),
        Field("partitions", Array(Int32)),
    ]), versions="7+"),
    Field("rack_id", String, versions="11+"),
])

RESPONSE = Message("FetchResponse", api_key=1, valid="0-11", fields=[
    Field("throttle_time_ms", Int32, versions="1+"),
    Field("error_code", Int16, versions="7+"),
    Field("session_id", Int32, versions="7+"),
    Field("responses", Array([
        Field("topic", String),
        Field("partitions", Array([
            Field("partition_index", Int32),
            Field("error_code", Int16),
            Field("high_watermark", Int64),
            Field("last_stable_offset", Int64, versions="4+"),
            Field("log_start_offset", Int64, versions="5+"),
            Field("aborted_transactions", Array([
                Field("producer_id", Int64),
                Field("first_offset", Int64),
            ]), versions="4+", nullable="4+"),
            Field("preferred_read_replica", Int32, versions="11+"),
            Field("records", Records, nullable="0+", about="send b'', never null: librdkafka rejects -1"),
        ])),
    ])),
])
