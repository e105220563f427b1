"""PushTelemetry (api key 72), version 0.

Push client metrics (KIP-714).

What each version changes (derived from the field ranges):

* v0: flexible from the start
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Boolean, Int8, Int16, Int32, Uuid
from kproto.schema import Bytes, Field, Message

REQUEST = Message("PushTelemetryRequest", api_key=72, valid="0", flexible="0+", fields=[
    Field("client_instance_id", Uuid),
    Field("subscription_id", Int32),
    Field("terminating", Boolean),
    Field("compression_type", Int8),
    Field("metrics", Bytes),
])

RESPONSE = Message("PushTelemetryResponse", api_key=72, valid="0", flexible="0+", fields=[
    Field("throttle_time_ms", Int32),
    Field("error_code", Int16),
])
