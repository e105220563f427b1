"""DescribeConfigs (api key 32), versions 1-4.

Describe the configs of topics, brokers and other resources.

What each version changes (derived from the field ranges):

* v2: same layout (new semantics or errors)
* v3: request adds ``include_documentation``; response adds ``results.configs.config_type``, ``results.configs.documentation``
* v4: flexible (compact strings and arrays, tagged fields)
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Boolean, Int8, Int16, Int32
from kproto.schema import Array, Field, Message, String

REQUEST = Message("DescribeConfigsRequest", api_key=32, valid="1-4", flexible="4+", fields=[
    Field("resources", Array([
        Field("resource_type", Int8),
        Field("resource_name", String),
        Field("configuration_keys", Array(String), nullable="0+"),
    ])),
    Field("include_synonyms", Boolean, versions="1+"),
    Field("include_documentation", Boolean, versions="3+"),
])

RESPONSE = Message("DescribeConfigsResponse", api_key=32, valid="1-4", flexible="4+", fields=[
    Field("throttle_time_ms", Int32),
    Field("results", Array([
        Field("error_code", Int16),
        Field("error_message", String, nullable="0+"),
        Field("resource_type", Int8),
        Field("resource_name", String),
        Field("configs", Array([
            Field("name", String),
            Field("value", String, nullable="0+"),
            Field("read_only", Boolean),
            Field("config_source", Int8, versions="1+", default=-1),
            Field("is_default", Boolean, versions="0"),
            Field("is_sensitive", Boolean),
            Field("synonyms", Array([
                Field("name", String, versions="1+"),
                Field("value", String, versions="1+", nullable="0+"),
                Field("source", Int8, versions="1+"),
            ]), versions="1+"),
            Field("config_type", Int8, versions="3+"),
            Field("documentation", String, versions="3+", nullable="0+"),
        ])),
    ])),
])
