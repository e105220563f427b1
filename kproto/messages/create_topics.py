"""CreateTopics (api key 19), versions 0-7.

Create topics with a partition count or an explicit replica assignment, and
per-topic configs. ``num_partitions``/``replication_factor`` are -1 when
``assignments`` is given (from v4 also to mean "the broker's default").

What each version changes (derived from the field ranges):

* v1: request adds ``validate_only``; response adds ``topics.error_message``
* v2: response adds ``throttle_time_ms``
* v3: same layout (new semantics or errors)
* v4: same layout (new semantics or errors)
* v5: flexible (compact strings and arrays, tagged fields); response adds ``topics.topic_config_error_code`` (tagged), ``topics.num_partitions``, ``topics.replication_factor``, ``topics.configs``
* v6: same layout (new semantics or errors)
* v7: response adds ``topics.topic_id``
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Boolean, Int8, Int16, Int32, Uuid
from kproto.schema import Array, Field, Message, String

REQUEST = Message("CreateTopicsRequest", api_key=19, valid="0-7", flexible="5+", fields=[
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
    Field("timeout_ms", Int32, default=60000),
    Field("validate_only", Boolean, versions="1+"),
])

RESPONSE = Message("CreateTopicsResponse", api_key=19, valid="0-7", flexible="5+", fields=[
    Field("throttle_time_ms", Int32, versions="2+"),
    Field("topics", Array([
        Field("name", String),
        Field("topic_id", Uuid, versions="7+"),
        Field("error_code", Int16),
        Field("error_message", String, versions="1+", nullable="0+"),
        Field("topic_config_error_code", Int16, versions="5+", tag=0),
        Field("num_partitions", Int32, versions="5+", default=-1),
        Field("replication_factor", Int16, versions="5+", default=-1),
        Field("configs", Array([
            Field("name", String, versions="5+"),
            Field("value", String, versions="5+", nullable="5+"),
            Field("read_only", Boolean, versions="5+"),
            Field("config_source", Int8, versions="5+", default=-1),
            Field("is_sensitive", Boolean, versions="5+"),
        ]), versions="5+", nullable="5+"),
    ])),
])
