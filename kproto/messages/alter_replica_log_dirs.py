"""AlterReplicaLogDirs (api key 34), versions 1-2.

Move replicas between a broker's log directories.

What each version changes (derived from the field ranges):

* v2: flexible (compact strings and arrays, tagged fields)
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Int16, Int32
from kproto.schema import Array, Field, Message, String

REQUEST = Message("AlterReplicaLogDirsRequest", api_key=34, valid="1-2", flexible="2+", fields=[
    Field("dirs", Array([
        Field("path", String),
        Field("topics", Array([
            Field("name", String),
            Field("partitions", Array(Int32)),
        ])),
    ])),
])

RESPONSE = Message("AlterReplicaLogDirsResponse", api_key=34, valid="1-2", flexible="2+", fields=[
    Field("throttle_time_ms", Int32),
    Field("results", Array([
        Field("topic_name", String),
        Field("partitions", Array([
            Field("partition_index", Int32),
            Field("error_code", Int16),
        ])),
    ])),
])
