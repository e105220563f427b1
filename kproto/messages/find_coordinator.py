"""FindCoordinator (api key 10; GroupCoordinator / ConsumerMetadata in 0.8.2).

Which broker coordinates a consumer group: on a single broker, always itself.
"""

from __future__ import annotations

from kproto.primitives import Int16, Int32
from kproto.schema import Field, Message, String

REQUEST = Message("FindCoordinatorRequest", api_key=10, valid="0", fields=[
    Field("key", String, about="the group id"),
])

RESPONSE = Message("FindCoordinatorResponse", api_key=10, valid="0", fields=[
    Field("error_code", Int16),
    Field("node_id", Int32),
    Field("host", String),
    Field("port", Int32),
])
