"""DeleteTopics (api key 20): delete topics by name.

v1 adds throttle time; v3 may answer TOPIC_DELETION_DISABLED.  v4 is
flexible: kproto stops at v3.
"""

from __future__ import annotations

from kproto.primitives import Int16, Int32
from kproto.schema import Array, Field, Message, String

REQUEST = Message("DeleteTopicsRequest", api_key=20, valid="0-3", fields=[
    Field("topic_names", Array(String)),
    Field("timeout_ms", Int32),
])

RESPONSE = Message("DeleteTopicsResponse", api_key=20, valid="0-3", fields=[
    Field("throttle_time_ms", Int32, versions="1+"),
    Field("responses", Array([
        Field("name", String),
        Field("error_code", Int16),
    ])),
])
