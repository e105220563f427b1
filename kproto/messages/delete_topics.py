"""DeleteTopics (api key 20), versions 0-6.

Delete topics by name (from v6 also by topic id).

What each version changes (derived from the field ranges):

* v1: response adds ``throttle_time_ms``
* v2: same layout (new semantics or errors)
* v3: same layout (new semantics or errors)
* v4: flexible (compact strings and arrays, tagged fields)
* v5: response adds ``responses.error_message``
* v6: request adds ``topics``; request drops ``topic_names``; response adds ``responses.topic_id``
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Int16, Int32, Uuid
from kproto.schema import Array, Field, Message, String

REQUEST = Message("DeleteTopicsRequest", api_key=20, valid="0-6", flexible="4+", fields=[
    Field("topics", Array([
        Field("name", String, versions="6+", nullable="6+", default=None),
        Field("topic_id", Uuid, versions="6+"),
    ]), versions="6+"),
    Field("topic_names", Array(String), versions="0-5"),
    Field("timeout_ms", Int32),
])

RESPONSE = Message("DeleteTopicsResponse", api_key=20, valid="0-6", flexible="4+", fields=[
    Field("throttle_time_ms", Int32, versions="1+"),
    Field("responses", Array([
        Field("name", String, nullable="6+"),
        Field("topic_id", Uuid, versions="6+"),
        Field("error_code", Int16),
        Field("error_message", String, versions="5+", nullable="5+", default=None),
    ])),
])
