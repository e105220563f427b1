"""DescribeLogDirs (api key 35), versions 1-5.

The log directories of a broker, with partition sizes and lags.

What each version changes (derived from the field ranges):

* v2: flexible (compact strings and arrays, tagged fields)
* v3: response adds ``error_code``
* v4: response adds ``results.total_bytes``, ``results.usable_bytes``
* v5: response adds ``results.is_cordoned``
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Boolean, Int16, Int32, Int64
from kproto.schema import Array, Field, Message, String

REQUEST = Message("DescribeLogDirsRequest", api_key=35, valid="1-5", flexible="2+", fields=[
    Field("topics", Array([
        Field("topic", String),
        Field("partitions", Array(Int32)),
    ]), nullable="0+"),
])

RESPONSE = Message("DescribeLogDirsResponse", api_key=35, valid="1-5", flexible="2+", fields=[
    Field("throttle_time_ms", Int32),
    Field("error_code", Int16, versions="3+"),
    Field("results", Array([
        Field("error_code", Int16),
        Field("log_dir", String),
        Field("topics", Array([
            Field("name", String),
            Field("partitions", Array([
                Field("partition_index", Int32),
                Field("partition_size", Int64),
                Field("offset_lag", Int64),
                Field("is_future_key", Boolean),
            ])),
        ])),
        Field("total_bytes", Int64, versions="4+", default=-1),
        Field("usable_bytes", Int64, versions="4+", default=-1),
        Field("is_cordoned", Boolean, versions="5+"),
    ])),
])
