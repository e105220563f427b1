"""ListTransactions (api key 66), versions 0-2.

List transactions, filtered by state, producer id and duration.

What each version changes (derived from the field ranges):

* v0: flexible from the start
* v1: request adds ``duration_filter``
* v2: request adds ``transactional_id_pattern``
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Int16, Int32, Int64
from kproto.schema import Array, Field, Message, String

REQUEST = Message("ListTransactionsRequest", api_key=66, valid="0-2", flexible="0+", fields=[
    Field("state_filters", Array(String)),
    Field("producer_id_filters", Array(Int64)),
    Field("duration_filter", Int64, versions="1+", default=-1),
    Field("transactional_id_pattern", String, versions="2+", nullable="2+", default=None),
])

RESPONSE = Message("ListTransactionsResponse", api_key=66, valid="0-2", flexible="0+", fields=[
    Field("throttle_time_ms", Int32),
    Field("error_code", Int16),
    Field("unknown_state_filters", Array(String)),
    Field("transaction_states", Array([
        Field("transactional_id", String),
        Field("producer_id", Int64),
        Field("transaction_state", String),
    ])),
])
