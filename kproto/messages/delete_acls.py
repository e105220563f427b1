"""DeleteAcls (api key 31), versions 1-3.

Delete ACLs matching filters.

What each version changes (derived from the field ranges):

* v2: flexible (compact strings and arrays, tagged fields)
* v3: same layout (new semantics or errors)
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Int8, Int16, Int32
from kproto.schema import Array, Field, Message, String

REQUEST = Message("DeleteAclsRequest", api_key=31, valid="1-3", flexible="2+", fields=[
    Field("filters", Array([
        Field("resource_type_filter", Int8),
        Field("resource_name_filter", String, nullable="0+"),
        Field("pattern_type_filter", Int8, versions="1+", default=3),
        Field("principal_filter", String, nullable="0+"),
        Field("host_filter", String, nullable="0+"),
        Field("operation", Int8),
        Field("permission_type", Int8),
    ])),
])

RESPONSE = Message("DeleteAclsResponse", api_key=31, valid="1-3", flexible="2+", fields=[
    Field("throttle_time_ms", Int32),
    Field("filter_results", Array([
        Field("error_code", Int16),
        Field("error_message", String, nullable="0+"),
        Field("matching_acls", Array([
            Field("error_code", Int16),
            Field("error_message", String, nullable="0+"),
            Field("resource_type", Int8),
            Field("resource_name", String),
            Field("pattern_type", Int8, versions="1+", default=3),
            Field("principal", String),
            Field("host", String),
            Field("operation", Int8),
            Field("permission_type", Int8),
        ])),
    ])),
])
