"""CreateTopics (api key 19): create topics with a partition count or an
explicit replica assignment, and per-topic configs.

``num_partitions``/``replication_factor`` are -1 when ``assignments`` is
given (from v4 also to mean "the broker's default").  v1 adds
``validate_only`` and a per-topic error message, v2 throttle time.  v5 is
flexible (and answers the topic configs): kproto stops at v4.
"""

from __future__ import annotations

from kproto.primitives import Boolean, Int16, Int32
from kproto.schema import Array, Field, Message, String

REQUEST = Message("CreateTopicsRequest", api_key=19, valid="0-4", fields=[
    Field("topics", Array([
        Field("name", String),
        Field("num_partitions", Int32),
        Field("replication_factor", Int16),
        Field("assignments", Array([
            Field("partition_index", Int32),
            Field("broker_ids", Array(Int32)),
        ])),
        Field("configs", Array([
            Field("name", String),
            Field("value", String, nullable="0+"),
        ])),
    ])),
    Field("timeout_ms", Int32),
    Field("validate_only", Boolean, versions="1+"),
])

RESPONSE = Message("CreateTopicsResponse", api_key=19, valid="0-4", fields=[
    Field("throttle_time_ms", Int32, versions="2+"),
    Field("topics", Array([
        Field("name", String),
        Field("error_code", Int16),
        Field("error_message", String, versions="1+", nullable="0+"),
    ])),
])
