"""Produce (api key 0), versions 0-13.

Append record sets to partitions. With ``acks == 0`` the broker sends no
response at all. ``records`` stays raw bytes: the record formats live in
:mod:`kproto.records`. v1 and v2 have v0's request layout (v2 announces
magic 1); v3 brings RecordBatch (magic 2); v4-v7 change only the errors and
codecs allowed. From v13 topics are named by id (KIP-516).

What each version changes (derived from the field ranges):

* v1: response adds ``throttle_time_ms``
* v2: response adds ``responses.partition_responses.log_append_time_ms``
* v3: request adds ``transactional_id``
* v4: same layout (new semantics or errors)
* v5: response adds ``responses.partition_responses.log_start_offset``
* v6: same layout (new semantics or errors)
* v7: same layout (new semantics or errors)
* v8: response adds ``responses.partition_responses.record_errors``, ``responses.partition_responses.error_message``
* v9: flexible (compact strings and arrays, tagged fields)
* v10: response adds ``responses.partition_responses.current_leader`` (tagged), ``node_endpoints`` (tagged)
* v11: same layout (new semantics or errors)
* v12: same layout (new semantics or errors)
* v13: request adds ``topic_data.topic_id``; request drops ``topic_data.name``; response adds ``responses.topic_id``; response drops ``responses.name``
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Int16, Int32, Int64, Uuid
from kproto.schema import Array, Field, Message, Nested, Records, String

REQUEST = Message("ProduceRequest", api_key=0, valid="0-13", flexible="9+", fields=[
    Field("transactional_id", String, versions="3+", nullable="3+", default=None),
    Field("acks", Int16),
    Field("timeout_ms", Int32),
    Field("topic_data", Array([
        Field("name", String, versions="0-12"),
        Field("topic_id", Uuid, versions="13+"),
        Field("partition_data", Array([
            Field("index", Int32),
            Field("records", Records, nullable="0+"),
        ])),
    ])),
])

RESPONSE = Message("ProduceResponse", api_key=0, valid="0-13", flexible="9+", fields=[
    Field("responses", Array([
        Field("name", String, versions="0-12"),
        Field("topic_id", Uuid, versions="13+"),
        Field("partition_responses", Array([
            Field("index", Int32),
            Field("error_code", Int16),
            Field("base_offset", Int64),
            Field("log_append_time_ms", Int64, versions="2+", default=-1),
            Field("log_start_offset", Int64, versions="5+", default=-1),
            Field("record_errors", Array([
                Field("batch_index", Int32, versions="8+"),
                Field("batch_index_error_message", String, versions="8+", nullable="8+", default=None),
            ]), versions="8+"),
            Field("error_message", String, versions="8+", nullable="8+", default=None),
            Field("current_leader", Nested([
                Field("leader_id", Int32, versions="10+", default=-1),
                Field("leader_epoch", Int32, versions="10+", default=-1),
            ]), versions="10+", tag=0),
        ])),
    ])),
    Field("throttle_time_ms", Int32, versions="1+"),
    Field("node_endpoints", Array([
        Field("node_id", Int32, versions="10+"),
        Field("host", String, versions="10+"),
        Field("port", Int32, versions="10+"),
        Field("rack", String, versions="10+", nullable="10+", default=None),
    ]), versions="10+", tag=0),
])
