"""EndTxn (api key 26), versions 0-5.

Commit or abort a transaction.

What each version changes (derived from the field ranges):

* v1: same layout (new semantics or errors)
* v2: same layout (new semantics or errors)
* v3: flexible (compact strings and arrays, tagged fields)
* v4: same layout (new semantics or errors)
* v5: response adds ``producer_id``, ``producer_epoch``
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Boolean, Int16, Int32, Int64
from kproto.schema import Field, Message, String

REQUEST = Message("EndTxnRequest", api_key=26, valid="0-5", flexible="3+", fields=[
    Field("transactional_id", String),
    Field("producer_id", Int64),
    Field("producer_epoch", Int16),
    Field("committed", Boolean),
])

RESPONSE = Message("EndTxnResponse", api_key=26, valid="0-5", flexible="3+", fields=[
    Field("throttle_time_ms", Int32),
    Field("error_code", Int16),
    Field("producer_id", Int64, versions="5+", default=-1),
    Field("producer_epoch", Int16, versions="5+", default=-1),
])
