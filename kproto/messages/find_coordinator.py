"""FindCoordinator (api key 10; GroupCoordinator / ConsumerMetadata in 0.8.2).

Which broker coordinates a consumer group (``key_type`` 0) or a
transactional id (1): on a single broker, always itself.  v1 adds the key
type, throttle time and an error message.  v3 is flexible.
"""

from __future__ import annotations

from kproto.primitives import Int8, Int16, Int32
from kproto.schema import Field, Message, String

REQUEST = Message("FindCoordinatorRequest", api_key=10, valid="0-2", fields=[
    Field("key", String, about="the group id (or transactional id)"),
    Field("key_type", Int8, versions="1+", about="0 group, 1 transaction"),
])

RESPONSE = Message("FindCoordinatorResponse", api_key=10, valid="0-2", fields=[
    Field("throttle_time_ms", Int32, versions="1+"),
    Field("error_code", Int16),
    Field("error_message", String, versions="1+", nullable="1+"),
    Field("node_id", Int32),
    Field("host", String),
    Field("port", Int32),
])
