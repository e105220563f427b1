"""AddPartitionsToTxn (api key 24), versions 0-5.

Add partitions to an ongoing transaction; from v4 a broker may batch several
transactions (then the request is inter-broker).

What each version changes (derived from the field ranges):

* v1: same layout (new semantics or errors)
* v2: same layout (new semantics or errors)
* v3: flexible (compact strings and arrays, tagged fields)
* v4: request adds ``transactions``; request drops ``v3_and_below_transactional_id``, ``v3_and_below_producer_id``, ``v3_and_below_producer_epoch``, ``v3_and_below_topics``; response adds ``error_code``, ``results_by_transaction``; response drops ``results_by_topic_v3_and_below``
* v5: same layout (new semantics or errors)
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Boolean, Int16, Int32, Int64
from kproto.schema import Array, Field, Message, String

REQUEST = Message("AddPartitionsToTxnRequest", api_key=24, valid="0-5", flexible="3+", fields=[
    Field("transactions", Array([
        Field("transactional_id", String, versions="4+"),
        Field("producer_id", Int64, versions="4+"),
        Field("producer_epoch", Int16, versions="4+"),
        Field("verify_only", Boolean, versions="4+"),
        Field("topics", Array([
            Field("name", String),
            Field("partitions", Array(Int32)),
        ]), versions="4+"),
    ]), versions="4+"),
    Field("v3_and_below_transactional_id", String, versions="0-3"),
    Field("v3_and_below_producer_id", Int64, versions="0-3"),
    Field("v3_and_below_producer_epoch", Int16, versions="0-3"),
    Field("v3_and_below_topics", Array([
        Field("name", String),
        Field("partitions", Array(Int32)),
    ]), versions="0-3"),
])

RESPONSE = Message("AddPartitionsToTxnResponse", api_key=24, valid="0-5", flexible="3+", fields=[
    Field("throttle_time_ms", Int32),
    Field("error_code", Int16, versions="4+"),
    Field("results_by_transaction", Array([
        Field("transactional_id", String, versions="4+"),
        Field("topic_results", Array([
            Field("name", String),
            Field("results_by_partition", Array([
                Field("partition_index", Int32),
                Field("partition_error_code", Int16),
            ])),
        ]), versions="4+"),
    ]), versions="4+"),
    Field("results_by_topic_v3_and_below", Array([
        Field("name", String),
        Field("results_by_partition", Array([
            Field("partition_index", Int32),
            Field("partition_error_code", Int16),
        ])),
    ]), versions="0-3"),
])
