"""WriteTxnMarkers (api key 27), versions 1-2.

Write transaction markers into partitions: sent by a transaction coordinator
to partition leaders (inter-broker, declared because tools decode it).

What each version changes (derived from the field ranges):

* v1: flexible from the start
* v2: request adds ``markers.transaction_version``
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Boolean, Int8, Int16, Int32, Int64
from kproto.schema import Array, Field, Message, String

REQUEST = Message("WriteTxnMarkersRequest", api_key=27, valid="1-2", flexible="1+", fields=[
    Field("markers", Array([
        Field("producer_id", Int64),
        Field("producer_epoch", Int16),
        Field("transaction_result", Boolean),
        Field("topics", Array([
            Field("name", String),
            Field("partition_indexes", Array(Int32)),
        ])),
        Field("coordinator_epoch", Int32),
        Field("transaction_version", Int8, versions="2+"),
    ])),
])

RESPONSE = Message("WriteTxnMarkersResponse", api_key=27, valid="1-2", flexible="1+", fields=[
    Field("markers", Array([
        Field("producer_id", Int64),
        Field("topics", Array([
            Field("name", String),
            Field("partitions", Array([
                Field("partition_index", Int32),
                Field("error_code", Int16),
            ])),
        ])),
    ])),
])
