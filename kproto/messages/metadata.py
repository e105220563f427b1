"""Metadata (api key 3): brokers, topics, partitions and their leaders.

In v0 an empty ``topics`` list means "all topics"; from v1 that is a null
list (and an empty one means "no topics").  Asking for an unknown topic may
auto-create it when the broker allows that (v4+: only if the client also
allows it).  v1 adds racks, the controller and ``is_internal``, v2 the
cluster id, v3 throttle time, v5 offline replicas, v7 leader epochs, v8
authorized operations.  v9 is flexible.
"""

from __future__ import annotations

from kproto.primitives import Boolean, Int16, Int32
from kproto.schema import Array, Field, Message, String

REQUEST = Message("MetadataRequest", api_key=3, valid="0-8", fields=[
    Field("topics", Array([
        Field("name", String),
    ]), nullable="1+"),
    Field("allow_auto_topic_creation", Boolean, versions="4+"),
    Field("include_cluster_authorized_operations", Boolean, versions="8-10"),
    Field("include_topic_authorized_operations", Boolean, versions="8+"),
])

RESPONSE = Message("MetadataResponse", api_key=3, valid="0-8", fields=[
    Field("throttle_time_ms", Int32, versions="3+"),
    Field("brokers", Array([
        Field("node_id", Int32),
        Field("host", String),
        Field("port", Int32),
        Field("rack", String, versions="1+", nullable="1+"),
    ])),
    Field("cluster_id", String, versions="2+", nullable="2+"),
    Field("controller_id", Int32, versions="1+"),
    Field("topics", Array([
        Field("error_code", Int16),
        Field("name", String),
        Field("is_internal", Boolean, versions="1+"),
        Field("partitions", Array([
            Field("error_code", Int16),
            Field("partition_index", Int32),
            Field("leader_id", Int32),
            Field("leader_epoch", Int32, versions="7+"),
            Field("replica_nodes", Array(Int32)),
            Field("isr_nodes", Array(Int32)),
            Field("offline_replicas", Array(Int32), versions="5+"),
        ])),
        Field("topic_authorized_operations", Int32, versions="8+"),
    ])),
    Field("cluster_authorized_operations", Int32, versions="8-10"),
])
