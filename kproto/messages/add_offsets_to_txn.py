"""AddOffsetsToTxn (api key 25), versions 0-4.

Add a consumer group's offsets to an ongoing transaction.

What each version changes (derived from the field ranges):

* v1: same layout (new semantics or errors)
* v2: same layout (new semantics or errors)
* v3: flexible (compact strings and arrays, tagged fields)
* v4: same layout (new semantics or errors)
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Int16, Int32, Int64
from kproto.schema import Field, Message, String

REQUEST = Message("AddOffsetsToTxnRequest", api_key=25, valid="0-4", flexible="3+", fields=[
    Field("transactional_id", String),
    Field("producer_id", Int64),
    Field("producer_epoch", Int16),
    Field("group_id", String),
])

RESPONSE = Message("AddOffsetsToTxnResponse", api_key=25, valid="0-4", flexible="3+", fields=[
    Field("throttle_time_ms", Int32),
    Field("error_code", Int16),
])
