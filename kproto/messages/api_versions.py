"""ApiVersions (api key 18), versions 0-4.

Which API keys and versions the broker serves; modern clients send it first.
A request version the broker does not know is answered with error 35
(UNSUPPORTED_VERSION) in the *v0 body layout*, listing what is supported,
and the response header is always v0 (never flexible) so that any client can
read that answer. Tagged feature fields are written only when they differ
from their defaults: librdkafka 2.0 fails on tagged fields it did not
expect.

What each version changes (derived from the field ranges):

* v1: response adds ``throttle_time_ms``
* v2: same layout (new semantics or errors)
* v3: flexible (compact strings and arrays, tagged fields); request adds ``client_software_name``, ``client_software_version``; response adds ``supported_features`` (tagged), ``finalized_features_epoch`` (tagged), ``finalized_features`` (tagged), ``zk_migration_ready`` (tagged)
* v4: same layout (new semantics or errors)
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Boolean, Int16, Int32, Int64
from kproto.schema import Array, Field, Message, String

REQUEST = Message("ApiVersionsRequest", api_key=18, valid="0-4", flexible="3+", fields=[
    Field("client_software_name", String, versions="3+"),
    Field("client_software_version", String, versions="3+"),
])

RESPONSE = Message("ApiVersionsResponse", api_key=18, valid="0-4", flexible="3+", fields=[
    Field("error_code", Int16),
    Field("api_keys", Array([
        Field("api_key", Int16),
        Field("min_version", Int16),
        Field("max_version", Int16),
    ])),
    Field("throttle_time_ms", Int32, versions="1+"),
    Field("supported_features", Array([
        Field("name", String, versions="3+"),
        Field("min_version", Int16, versions="3+"),
        Field("max_version", Int16, versions="3+"),
    ]), versions="3+", tag=0),
    Field("finalized_features_epoch", Int64, versions="3+", tag=1, default=-1),
    Field("finalized_features", Array([
        Field("name", String, versions="3+"),
        Field("max_version_level", Int16, versions="3+"),
        Field("min_version_level", Int16, versions="3+"),
    ]), versions="3+", tag=2),
    Field("zk_migration_ready", Boolean, versions="3+", tag=3),
])
