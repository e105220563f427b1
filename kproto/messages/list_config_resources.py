"""ListConfigResources (api key 74), versions 0-1.

List config resources by type (v0 was ListClientMetricsResources).

What each version changes (derived from the field ranges):

* v0: flexible from the start
* v1: request adds ``resource_types``; response adds ``config_resources.resource_type``
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Int8, Int16, Int32
from kproto.schema import Array, Field, Message, String

REQUEST = Message("ListConfigResourcesRequest", api_key=74, valid="0-1", flexible="0+", fields=[
    Field("resource_types", Array(Int8), versions="1+"),
])

RESPONSE = Message("ListConfigResourcesResponse", api_key=74, valid="0-1", flexible="0+", fields=[
    Field("throttle_time_ms", Int32),
    Field("error_code", Int16),
    Field("config_resources", Array([
        Field("resource_name", String),
        Field("resource_type", Int8, versions="1+", default=16),
    ])),
])
