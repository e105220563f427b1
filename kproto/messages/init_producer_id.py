"""InitProducerId (api key 22): a producer id and epoch for idempotent writes.

kafka-python's producer is idempotent by default and calls it when the
broker looks new enough (Metadata v4+ advertised).  A null transactional id
asks for an idempotent-only producer.  v1 differs only in throttling; v2 is
flexible; v3 sends the current producer id and epoch (-1/-1 for a new
producer; KIP-360 epoch bumps otherwise); v4 only adds an error code.
Some brokers (Tansu 0.6) answer only v3+ correctly.
"""

from __future__ import annotations

from kproto.primitives import Int16, Int32, Int64
from kproto.schema import Field, Message, String

REQUEST = Message("InitProducerIdRequest", api_key=22, valid="0-4", flexible="2+", fields=[
    Field("transactional_id", String, nullable="0+"),
    Field("transaction_timeout_ms", Int32),
    Field("producer_id", Int64, versions="3+", about="-1 for a new producer"),
    Field("producer_epoch", Int16, versions="3+", about="-1 for a new producer"),
])

RESPONSE = Message("InitProducerIdResponse", api_key=22, valid="0-4", flexible="2+", fields=[
    Field("throttle_time_ms", Int32),
    Field("error_code", Int16),
    Field("producer_id", Int64),
    Field("producer_epoch", Int16),
])
