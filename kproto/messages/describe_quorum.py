"""DescribeQuorum (api key 55), versions 0-2.

The state of the KRaft metadata quorum (served by brokers to admin tools).

What each version changes (derived from the field ranges):

* v0: flexible from the start
* v1: response adds ``topics.partitions.current_voters.last_fetch_timestamp``, ``topics.partitions.current_voters.last_caught_up_timestamp``, ``topics.partitions.observers.last_fetch_timestamp``, ``topics.partitions.observers.last_caught_up_timestamp``
* v2: response adds ``error_message``, ``topics.partitions.error_message``, ``topics.partitions.current_voters.replica_directory_id``, ``topics.partitions.observers.replica_directory_id``, ``nodes``
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Int16, Int32, Int64, UInt16, Uuid
from kproto.schema import Array, Field, Message, String

REQUEST = Message("DescribeQuorumRequest", api_key=55, valid="0-2", flexible="0+", fields=[
    Field("topics", Array([
        Field("topic_name", String),
        Field("partitions", Array([
            Field("partition_index", Int32),
        ])),
    ])),
])

RESPONSE = Message("DescribeQuorumResponse", api_key=55, valid="0-2", flexible="0+", fields=[
    Field("error_code", Int16),
    Field("error_message", String, versions="2+", nullable="2+"),
    Field("topics", Array([
        Field("topic_name", String),
        Field("partitions", Array([
            Field("partition_index", Int32),
            Field("error_code", Int16),
            Field("error_message", String, versions="2+", nullable="2+"),
            Field("leader_id", Int32),
            Field("leader_epoch", Int32),
            Field("high_watermark", Int64),
            Field("current_voters", Array([
                Field("replica_id", Int32),
                Field("replica_directory_id", Uuid, versions="2+"),
                Field("log_end_offset", Int64),
                Field("last_fetch_timestamp", Int64, versions="1+", default=-1),
                Field("last_caught_up_timestamp", Int64, versions="1+", default=-1),
            ])),
            Field("observers", Array([
                Field("replica_id", Int32),
                Field("replica_directory_id", Uuid, versions="2+"),
                Field("log_end_offset", Int64),
                Field("last_fetch_timestamp", Int64, versions="1+", default=-1),
                Field("last_caught_up_timestamp", Int64, versions="1+", default=-1),
            ])),
        ])),
    ])),
    Field("nodes", Array([
        Field("node_id", Int32, versions="2+"),
        Field("listeners", Array([
            Field("name", String, versions="2+"),
            Field("host", String, versions="2+"),
            Field("port", UInt16, versions="2+"),
        ]), versions="2+"),
    ]), versions="2+"),
])
