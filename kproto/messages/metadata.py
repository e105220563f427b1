"""Metadata (api key 3), versions 0-13.

Brokers, topics, partitions and their leaders. In v0 an empty ``topics``
list means "all topics"; from v1 that is a null list (and an empty one means
"no topics"). Asking for an unknown topic may auto-create it when the broker
allows that (v4+: only if the client also allows it).

What each version changes (derived from the field ranges):

* v1: response adds ``brokers.rack``, ``controller_id``, ``topics.is_internal``
* v2: response adds ``cluster_id``
* v3: response adds ``throttle_time_ms``
* v4: request adds ``allow_auto_topic_creation``
* v5: response adds ``topics.partitions.offline_replicas``
* v6: same layout (new semantics or errors)
* v7: response adds ``topics.partitions.leader_epoch``
* v8: request adds ``include_cluster_authorized_operations``, ``include_topic_authorized_operations``; response adds ``topics.topic_authorized_operations``, ``cluster_authorized_operations``
* v9: flexible (compact strings and arrays, tagged fields)
* v10: request adds ``topics.topic_id``; response adds ``topics.topic_id``
* v11: request drops ``include_cluster_authorized_operations``; response drops ``cluster_authorized_operations``
* v12: same layout (new semantics or errors)
* v13: response adds ``error_code``
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Boolean, Int16, Int32, Uuid
from kproto.schema import Array, Field, Message, String

REQUEST = Message("MetadataRequest", api_key=3, valid="0-13", flexible="9+", fields=[
    Field("topics", Array([
        Field("topic_id", Uuid, versions="10+"),
        Field("name", String, nullable="10+"),
    ]), nullable="1+"),
    Field("allow_auto_topic_creation", Boolean, versions="4+", default=True),
    Field("include_cluster_authorized_operations", Boolean, versions="8-10"),
    Field("include_topic_authorized_operations", Boolean, versions="8+"),
])

RESPONSE = Message("MetadataResponse", api_key=3, valid="0-13", flexible="9+", fields=[
    Field("throttle_time_ms", Int32, versions="3+"),
    Field("brokers", Array([
        Field("node_id", Int32),
        Field("host", String),
        Field("port", Int32),
        Field("rack", String, versions="1+", nullable="1+", default=None),
    ])),
    Field("cluster_id", String, versions="2+", nullable="2+", default=None),
    Field("controller_id", Int32, versions="1+", default=-1),
    Field("topics", Array([
        Field("error_code", Int16),
        Field("name", String, nullable="12+"),
        Field("topic_id", Uuid, versions="10+"),
        Field("is_internal", Boolean, versions="1+"),
        Field("partitions", Array([
            Field("error_code", Int16),
            Field("partition_index", Int32),
            Field("leader_id", Int32),
            Field("leader_epoch", Int32, versions="7+", default=-1),
            Field("replica_nodes", Array(Int32)),
            Field("isr_nodes", Array(Int32)),
            Field("offline_replicas", Array(Int32), versions="5+"),
        ])),
        Field("topic_authorized_operations", Int32, versions="8+", default=-2147483648),
    ])),
    Field("cluster_authorized_operations", Int32, versions="8-10", default=-2147483648),
    Field("error_code", Int16, versions="13+"),
])
