"""DeleteRecords (api key 21), versions 0-2.

Delete records before an offset: moves a partition's log start offset.

What each version changes (derived from the field ranges):

* v1: same layout (new semantics or errors)
* v2: flexible (compact strings and arrays, tagged fields)
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Int16, Int32, Int64
from kproto.schema import Array, Field, Message, String

REQUEST = Message("DeleteRecordsRequest", api_key=21, valid="0-2", flexible="2+", fields=[
    Field("topics", Array([
        Field("name", String),
        Field("partitions", Array([
            Field("partition_index", Int32),
            Field("offset", Int64),
        ])),
    ])),
    Field("timeout_ms", Int32),
])

RESPONSE = Message("DeleteRecordsResponse", api_key=21, valid="0-2", flexible="2+", fields=[
    Field("throttle_time_ms", Int32),
    Field("topics", Array([
        Field("name", String),
        Field("partitions", Array([
            Field("partition_index", Int32),
            Field("low_watermark", Int64),
            Field("error_code", Int16),
        ])),
    ])),
])
