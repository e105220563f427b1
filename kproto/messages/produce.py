"""Produce (api key 0): append record sets to partitions.

With ``acks == 0`` the broker sends no response at all.  ``records`` stays
raw bytes: the record formats live in :mod:`kproto.records`.  v1 and v2 have
v0's request layout (v2 announces magic 1); v3 adds the transactional id and
RecordBatch (magic 2); v4-v7 change only the errors and codecs allowed; v8
adds per-record errors to the response.  v9 is flexible.
"""

from __future__ import annotations

from kproto.primitives import Int16, Int32, Int64
from kproto.schema import Array, Field, Message, Records, String

REQUEST = Message("ProduceRequest", api_key=0, valid="0-8", fields=[
    Field("transactional_id", String, versions="3+", nullable="3+"),
    Field("acks", Int16),
    Field("timeout_ms", Int32),
    Field("topic_data", Array([
        Field("name", String),
        Field("partition_data", Array([
            Field("index", Int32),
            Field("records", Records, nullable="0+"),
        ])),
    ])),
])

RESPONSE = Message("ProduceResponse", api_key=0, valid="0-8", fields=[
    Field("responses", Array([
        Field("name", String),
        Field("partition_responses", Array([
            Field("index", Int32),
            Field("error_code", Int16),
            Field("base_offset", Int64),
            Field("log_append_time_ms", Int64, versions="2+", about="-1 unless the topic uses LogAppendTime"),
            Field("log_start_offset", Int64, versions="5+"),
            Field("record_errors", Array([
                Field("batch_index", Int32),
                Field("batch_index_error_message", String, nullable="8+"),
            ]), versions="8+"),
            Field("error_message", String, versions="8+", nullable="8+"),
        ])),
    ])),
    Field("throttle_time_ms", Int32, versions="1+"),
])
