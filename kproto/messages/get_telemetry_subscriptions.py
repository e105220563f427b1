"""GetTelemetrySubscriptions (api key 71), version 0.

Which client metrics a client should push (KIP-714).

What each version changes (derived from the field ranges):

* v0: flexible from the start
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Boolean, Int8, Int16, Int32, Uuid
from kproto.schema import Array, Field, Message, String

REQUEST = Message("GetTelemetrySubscriptionsRequest", api_key=71, valid="0", flexible="0+", fields=[
    Field("client_instance_id", Uuid),
])

RESPONSE = Message("GetTelemetrySubscriptionsResponse", api_key=71, valid="0", flexible="0+", fields=[
    Field("throttle_time_ms", Int32),
    Field("error_code", Int16),
    Field("client_instance_id", Uuid),
    Field("subscription_id", Int32),
    Field("accepted_compression_types", Array(Int8)),
    Field("push_interval_ms", Int32),
    Field("telemetry_max_bytes", Int32),
    Field("delta_temporality", Boolean),
    Field("requested_metrics", Array(String)),
])
