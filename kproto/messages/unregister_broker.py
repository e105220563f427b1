"""UnregisterBroker (api key 64), version 0.

Remove a broker's registration from the cluster.

What each version changes (derived from the field ranges):

* v0: flexible from the start
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Int16, Int32
from kproto.schema import Field, Message, String

REQUEST = Message("UnregisterBrokerRequest", api_key=64, valid="0", flexible="0+", fields=[
    Field("broker_id", Int32),
])

RESPONSE = Message("UnregisterBrokerResponse", api_key=64, valid="0", flexible="0+", fields=[
    Field("throttle_time_ms", Int32),
    Field("error_code", Int16),
    Field("error_message", String, nullable="0+"),
])
