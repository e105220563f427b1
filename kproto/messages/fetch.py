"""Fetch (api key 1), versions 0-18.

Read record sets from partitions, with long-poll. ``max_wait_ms`` and
``min_bytes`` make the broker hold the request until enough data arrived;
``partition_max_bytes`` bounds each partition's record set, which may
therefore end with a partial message that readers must skip. v4 brings the
isolation level (magic 2), v7 incremental fetch sessions, v13 topic ids
instead of names. ``records``: send b'', never null (librdkafka rejects -1).

What each version changes (derived from the field ranges):

* v1: response adds ``throttle_time_ms``
* v2: same layout (new semantics or errors)
* v3: request adds ``max_bytes``
* v4: request adds ``isolation_level``; response adds ``responses.partitions.last_stable_offset``, ``responses.partitions.aborted_transactions``
* v5: request adds ``topics.partitions.log_start_offset``; response adds ``responses.partitions.log_start_offset``
* v6: same layout (new semantics or errors)
* v7: request adds ``session_id``, ``session_epoch``, ``forgotten_topics_data``; response adds ``error_code``, ``session_id``
* v8: same layout (new semantics or errors)
* v9: request adds ``topics.partitions.current_leader_epoch``
* v10: same layout (new semantics or errors)
* v11: request adds ``rack_id``; response adds ``responses.partitions.preferred_read_replica``
* v12: flexible (compact strings and arrays, tagged fields); request adds ``cluster_id`` (tagged), ``topics.partitions.last_fetched_epoch``; response adds ``responses.partitions.diverging_epoch`` (tagged), ``responses.partitions.current_leader`` (tagged), ``responses.partitions.snapshot_id`` (tagged)
* v13: request adds ``topics.topic_id``, ``forgotten_topics_data.topic_id``; request drops ``topics.topic``, ``forgotten_topics_data.topic``; response adds ``responses.topic_id``; response drops ``responses.topic``
* v14: same layout (new semantics or errors)
* v15: request adds ``replica_state`` (tagged); request drops ``replica_id``
* v16: response adds ``node_endpoints`` (tagged)
* v17: request adds ``topics.partitions.replica_directory_id`` (tagged)
* v18: request adds ``topics.partitions.high_watermark`` (tagged)
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Int8, Int16, Int32, Int64, Uuid
from kproto.schema import Array, Field, Message, Nested, Records, String

REQUEST = Message("FetchRequest", api_key=1, valid="0-18", flexible="12+", fields=[
    Field("cluster_id", String, versions="12+", nullable="12+", tag=0, default=None),
    Field("replica_id", Int32, versions="0-14", default=-1),
    Field("replica_state", Nested([
        Field("replica_id", Int32, versions="15+", default=-1),
        Field("replica_epoch", Int64, versions="15+", default=-1),
    ]), versions="15+", tag=1),
    Field("max_wait_ms", Int32),
    Field("min_bytes", Int32),
    Field("max_bytes", Int32, versions="3+", default=2147483647),
    Field("isolation_level", Int8, versions="4+"),
    Field("session_id", Int32, versions="7+"),
    Field("session_epoch", Int32, versions="7+", default=-1),
    Field("topics", Array([
        Field("topic", String, versions="0-12"),
        Field("topic_id", Uuid, versions="13+"),
        Field("partitions", Array([
            Field("partition", Int32),
            Field("current_leader_epoch", Int32, versions="9+", default=-1),
            Field("fetch_offset", Int64),
            Field("last_fetched_epoch", Int32, versions="12+", default=-1),
            Field("log_start_offset", Int64, versions="5+", default=-1),
            Field("partition_max_bytes", Int32),
            Field("replica_directory_id", Uuid, versions="17+", tag=0),
            Field("high_watermark", Int64, versions="18+", tag=1, default=9223372036854775807),
        ])),
    ])),
    Field("forgotten_topics_data", Array([
        Field("topic", String, versions="7-12"),
        Field("topic_id", Uuid, versions="13+"),
        Field("partitions", Array(Int32), versions="7+"),
    ]), versions="7+"),
    Field("rack_id", String, versions="11+"),
])

RESPONSE = Message("FetchResponse", api_key=1, valid="0-18", flexible="12+", fields=[
    Field("throttle_time_ms", Int32, versions="1+"),
    Field("error_code", Int16, versions="7+"),
    Field("session_id", Int32, versions="7+"),
    Field("responses", Array([
        Field("topic", String, versions="0-12"),
        Field("topic_id", Uuid, versions="13+"),
        Field("partitions", Array([
            Field("partition_index", Int32),
            Field("error_code", Int16),
            Field("high_watermark", Int64),
            Field("last_stable_offset", Int64, versions="4+", default=-1),
            Field("log_start_offset", Int64, versions="5+", default=-1),
            Field("diverging_epoch", Nested([
                Field("epoch", Int32, versions="12+", default=-1),
                Field("end_offset", Int64, versions="12+", default=-1),
            ]), versions="12+", tag=0),
            Field("current_leader", Nested([
                Field("leader_id", Int32, versions="12+", default=-1),
                Field("leader_epoch", Int32, versions="12+", default=-1),
            ]), versions="12+", tag=1),
            Field("snapshot_id", Nested([
                Field("end_offset", Int64, default=-1),
                Field("epoch", Int32, default=-1),
            ]), versions="12+", tag=2),
            Field("aborted_transactions", Array([
                Field("producer_id", Int64, versions="4+"),
                Field("first_offset", Int64, versions="4+"),
            ]), versions="4+", nullable="4+"),
            Field("preferred_read_replica", Int32, versions="11+", default=-1),
            Field("records", Records, nullable="0+"),
        ])),
    ])),
    Field("node_endpoints", Array([
        Field("node_id", Int32, versions="16+"),
        Field("host", String, versions="16+"),
        Field("port", Int32, versions="16+"),
        Field("rack", String, versions="16+", nullable="16+", default=None),
    ]), versions="16+", tag=0),
])
