"""ElectLeaders (api key 43), versions 0-2.

Elect preferred or unclean partition leaders.

What each version changes (derived from the field ranges):

* v1: request adds ``election_type``; response adds ``error_code``
* v2: flexible (compact strings and arrays, tagged fields)
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Int8, Int16, Int32
from kproto.schema import Array, Field, Message, String

REQUEST = Message("ElectLeadersRequest", api_key=43, valid="0-2", flexible="2+", fields=[
    Field("election_type", Int8, versions="1+"),
    Field("topic_partitions", Array([
        Field("topic", String),
        Field("partitions", Array(Int32)),
    ]), nullable="0+"),
    Field("timeout_ms", Int32, default=60000),
])

RESPONSE = Message("ElectLeadersResponse", api_key=43, valid="0-2", flexible="2+", fields=[
    Field("throttle_time_ms", Int32),
    Field("error_code", Int16, versions="1+"),
    Field("replica_election_results", Array([
        Field("topic", String),
        Field("partition_result", Array([
            Field("partition_id", Int32),
            Field("error_code", Int16),
            Field("error_message", String, nullable="0+"),
        ])),
    ])),
])
