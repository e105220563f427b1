"""DescribeTransactions (api key 65), version 0.

Describe transactions by transactional id.

What each version changes (derived from the field ranges):

* v0: flexible from the start
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Int16, Int32, Int64
from kproto.schema import Array, Field, Message, String

REQUEST = Message("DescribeTransactionsRequest", api_key=65, valid="0", flexible="0+", fields=[
    Field("transactional_ids", Array(String)),
])

RESPONSE = Message("DescribeTransactionsResponse", api_key=65, valid="0", flexible="0+", fields=[
    Field("throttle_time_ms", Int32),
    Field("transaction_states", Array([
        Field("error_code", Int16),
        Field("transactional_id", String),
        Field("transaction_state", String),
        Field("transaction_timeout_ms", Int32),
        Field("transaction_start_time_ms", Int64),
        Field("producer_id", Int64),
        Field("producer_epoch", Int16),
        Field("topics", Array([
            Field("topic", String),
            Field("partitions", Array(Int32)),
        ])),
    ])),
])
