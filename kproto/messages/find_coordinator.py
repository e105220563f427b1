"""FindCoordinator (api key 10), versions 0-6.

Which broker coordinates a consumer group (``key_type`` 0) or a
transactional id (1): on a single broker, always itself. v4 asks for several
keys at once (KIP-699).

What each version changes (derived from the field ranges):

* v1: request adds ``key_type``; response adds ``throttle_time_ms``, ``error_message``
* v2: same layout (new semantics or errors)
* v3: flexible (compact strings and arrays, tagged fields)
* v4: request adds ``coordinator_keys``; request drops ``key``; response adds ``coordinators``; response drops ``error_code``, ``error_message``, ``node_id``, ``host``, ``port``
* v5: same layout (new semantics or errors)
* v6: same layout (new semantics or errors)
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Int8, Int16, Int32
from kproto.schema import Array, Field, Message, String

REQUEST = Message("FindCoordinatorRequest", api_key=10, valid="0-6", flexible="3+", fields=[
    Field("key", String, versions="0-3"),
    Field("key_type", Int8, versions="1+"),
    Field("coordinator_keys", Array(String), versions="4+"),
])

RESPONSE = Message("FindCoordinatorResponse", api_key=10, valid="0-6", flexible="3+", fields=[
    Field("throttle_time_ms", Int32, versions="1+"),
    Field("error_code", Int16, versions="0-3"),
    Field("error_message", String, versions="1-3", nullable="1-3"),
    Field("node_id", Int32, versions="0-3"),
    Field("host", String, versions="0-3"),
    Field("port", Int32, versions="0-3"),
    Field("coordinators", Array([
        Field("key", String, versions="4+"),
        Field("node_id", Int32, versions="4+"),
        Field("host", String, versions="4+"),
        Field("port", Int32, versions="4+"),
        Field("error_code", Int16, versions="4+"),
        Field("error_message", String, versions="4+", nullable="4+"),
    ]), versions="4+"),
])
