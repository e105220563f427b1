"""DescribeGroups (api key 15): state, protocol and members of groups.

``protocol_data`` is the chosen assignor's name; member metadata and
assignments are the opaque bytes exchanged in JoinGroup/SyncGroup.  v1 adds
throttle time, v3 authorized operations, v4 static instance ids.  v5 is
flexible.
"""

from __future__ import annotations

from kproto.primitives import Boolean, Int16, Int32
from kproto.schema import Array, Bytes, Field, Message, String

REQUEST = Message("DescribeGroupsRequest", api_key=15, valid="0-4", fields=[
    Field("groups", Array(String)),
    Field("include_authorized_operations", Boolean, versions="3+"),
])

RESPONSE = Message("DescribeGroupsResponse", api_key=15, valid="0-4", fields=[
    Field("throttle_time_ms", Int32, versions="1+"),
    Field("groups", Array([
        Field("error_code", Int16),
        Field("group_id", String),
        Field("group_state", String),
        Field("protocol_type", String),
        Field("protocol_data", String),
        Field("members", Array([
            Field("member_id", String),
            Field("group_instance_id", String, versions="4+", nullable="4+"),
            Field("client_id", String),
            Field("client_host", String),
            Field("member_metadata", Bytes),
            Field("member_assignment", Bytes),
        ])),
        Field("authorized_operations", Int32, versions="3+"),
    ])),
])
