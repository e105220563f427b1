"""InitProducerId (api key 22): a producer id and epoch for idempotent writes.

kafka-python's producer is idempotent by default and calls it when the
broker looks new enough (Metadata v4+ advertised).  A null transactional id
asks for an idempotent-only producer.  v1 differs only in throttling; v2 is
flexible.
"""

from __future__ import annotations

from kproto.primitives import Int16, Int32, Int64
from kproto.schema import Field, Message, String

REQUEST = Message("InitProducerIdRequest", api_key=22, valid="0-1", fields=[
    Field("transactional_id", String, nullable="0+"),
    Field("transaction_timeout_ms", Int32),
])

RESPONSE = Message("InitProducerIdResponse", api_key=22, valid="0-1", fields=[
    Field("throttle_time_ms", Int32),
    Field("error_code", Int16),
    Field("producer_id", Int64),
    Field("producer_epoch", Int16),
])
