"""ControlledShutdown (api key 7), versions 0-3.

A broker about to stop asks the controller to move the leadership of every
partition it leads to another in-sync replica (ZooKeeper mode,
inter-broker). The answer lists the partitions it still leads; the broker
asks again after a back-off. v0 is sent with request header v0 (no client
id).

What each version changes (derived from the field ranges):

* v1: same layout (new semantics or errors)
* v2: request adds ``broker_epoch``
* v3: flexible (compact strings and arrays, tagged fields)
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Int16, Int32, Int64
from kproto.schema import Array, Field, Message, String

REQUEST = Message("ControlledShutdownRequest", api_key=7, valid="0-3", flexible="3+", fields=[
    Field("broker_id", Int32),
    Field("broker_epoch", Int64, versions="2+", default=-1),
])

RESPONSE = Message("ControlledShutdownResponse", api_key=7, valid="0-3", flexible="3+", fields=[
    Field("error_code", Int16),
    Field("remaining_partitions", Array([
        Field("topic_name", String),
        Field("partition_index", Int32),
    ])),
])
