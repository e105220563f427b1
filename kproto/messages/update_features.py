"""UpdateFeatures (api key 57), versions 0-2.

Update finalized feature versions of the cluster.

What each version changes (derived from the field ranges):

* v0: flexible from the start
* v1: request adds ``feature_updates.upgrade_type``, ``validate_only``; request drops ``feature_updates.allow_downgrade``
* v2: response drops ``results``
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Boolean, Int8, Int16, Int32
from kproto.schema import Array, Field, Message, String

REQUEST = Message("UpdateFeaturesRequest", api_key=57, valid="0-2", flexible="0+", fields=[
    Field("timeout_ms", Int32, default=60000),
    Field("feature_updates", Array([
        Field("feature", String),
        Field("max_version_level", Int16),
        Field("allow_downgrade", Boolean, versions="0"),
        Field("upgrade_type", Int8, versions="1+", default=1),
    ])),
    Field("validate_only", Boolean, versions="1+"),
])

RESPONSE = Message("UpdateFeaturesResponse", api_key=57, valid="0-2", flexible="0+", fields=[
    Field("throttle_time_ms", Int32),
    Field("error_code", Int16),
    Field("error_message", String, nullable="0+"),
    Field("results", Array([
        Field("feature", String),
        Field("error_code", Int16),
        Field("error_message", String, nullable="0+"),
    ]), versions="0-1"),
])
