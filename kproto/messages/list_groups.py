"""ListGroups (api key 16): the groups a broker coordinates.

The request is empty up to v3; v1 adds throttle time.  v3 is flexible.
"""

from __future__ import annotations

from kproto.primitives import Int16, Int32
from kproto.schema import Array, Field, Message, String

REQUEST = Message("ListGroupsRequest", api_key=16, valid="0-2", fields=[])

RESPONSE = Message("ListGroupsResponse", api_key=16, valid="0-2", fields=[
    Field("throttle_time_ms", Int32, versions="1+"),
    Field("error_code", Int16),
    Field("groups", Array([
        Field("group_id", String),
        Field("protocol_type", String),
    ])),
])
