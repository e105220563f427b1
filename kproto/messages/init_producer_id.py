"""InitProducerId (api key 22), versions 0-6.

A producer id and epoch for idempotent and transactional writes. A null
transactional id asks for an idempotent-only producer; from v3 the client
sends its current id and epoch (-1/-1 for a new producer) so that the epoch
can be bumped (KIP-360).

What each version changes (derived from the field ranges):

* v1: same layout (new semantics or errors)
* v2: flexible (compact strings and arrays, tagged fields)
* v3: request adds ``producer_id``, ``producer_epoch``
* v4: same layout (new semantics or errors)
* v5: same layout (new semantics or errors)
* v6: request adds ``enable2_pc``, ``keep_prepared_txn``; response adds ``ongoing_txn_producer_id``, ``ongoing_txn_producer_epoch``
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Boolean, Int16, Int32, Int64
from kproto.schema import Field, Message, String

REQUEST = Message("InitProducerIdRequest", api_key=22, valid="0-6", flexible="2+", fields=[
    Field("transactional_id", String, nullable="0+"),
    Field("transaction_timeout_ms", Int32),
    Field("producer_id", Int64, versions="3+", default=-1),
    Field("producer_epoch", Int16, versions="3+", default=-1),
    Field("enable2_pc", Boolean, versions="6+"),
    Field("keep_prepared_txn", Boolean, versions="6+"),
])

RESPONSE = Message("InitProducerIdResponse", api_key=22, valid="0-6", flexible="2+", fields=[
    Field("throttle_time_ms", Int32),
    Field("error_code", Int16),
    Field("producer_id", Int64, default=-1),
    Field("producer_epoch", Int16),
    Field("ongoing_txn_producer_id", Int64, versions="6+", default=-1),
    Field("ongoing_txn_producer_epoch", Int16, versions="6+", default=-1),
])
