"""Produce (api key 0): append record sets to partitions.

Kafka 0.8's ProduceRequest.  With ``acks == 0`` the broker sends no response
at all.  ``records`` stays raw bytes: the record formats live in
:mod:`kproto.records`.
"""

from __future__ import annotations

from kproto.primitives import Int16, Int32, Int64
from kproto.schema import Array, Field, Message, Records, String

REQUEST = Message("ProduceRequest", api_key=0, valid="0", fields=[
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

RESPONSE = Message("ProduceResponse", api_key=0, valid="0", fields=[
    Field("responses", Array([
        Field("name", String),
        Field("partition_responses", Array([
            Field("index", Int32),
            Field("error_code", Int16),
            Field("base_offset", Int64),
        ])),
    ])),
])
