"""OffsetDelete (api key 47), version 0.

Delete a group's committed offsets for some partitions.

What each version changes (derived from the field ranges):


"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Int16, Int32
from kproto.schema import Array, Field, Message, String

REQUEST = Message("OffsetDeleteRequest", api_key=47, valid="0", fields=[
    Field("group_id", String),
    Field("topics", Array([
        Field("name", String),
        Field("partitions", Array([
            Field("partition_index", Int32),
        ])),
    ])),
])

RESPONSE = Message("OffsetDeleteResponse", api_key=47, valid="0", fields=[
    Field("error_code", Int16),
    Field("throttle_time_ms", Int32),
    Field("topics", Array([
        Field("name", String),
        Field("partitions", Array([
            Field("partition_index", Int32),
            Field("error_code", Int16),
        ])),
    ])),
])
