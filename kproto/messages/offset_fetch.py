"""OffsetFetch (api key 9), versions 0-10.

Read a consumer group's committed positions; -1 means "nothing committed".
v2 allows a null topic list ("all topics of the group"); from v8 several
groups are asked at once.

What each version changes (derived from the field ranges):

* v1: same layout (new semantics or errors)
* v2: response adds ``error_code``
* v3: response adds ``throttle_time_ms``
* v4: same layout (new semantics or errors)
* v5: response adds ``topics.partitions.committed_leader_epoch``
* v6: flexible (compact strings and arrays, tagged fields)
* v7: request adds ``require_stable``
* v8: request adds ``groups``; request drops ``group_id``, ``topics``; response adds ``groups``; response drops ``topics``, ``error_code``
* v9: request adds ``groups.member_id``, ``groups.member_epoch``
* v10: request adds ``groups.topics.topic_id``; request drops ``groups.topics.name``; response adds ``groups.topics.topic_id``; response drops ``groups.topics.name``
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Boolean, Int16, Int32, Int64, Uuid
from kproto.schema import Array, Field, Message, String

REQUEST = Message("OffsetFetchRequest", api_key=9, valid="0-10", flexible="6+", fields=[
    Field("group_id", String, versions="0-7"),
    Field("topics", Array([
        Field("name", String, versions="0-7"),
        Field("partition_indexes", Array(Int32), versions="0-7"),
    ]), versions="0-7", nullable="2-7"),
    Field("groups", Array([
        Field("group_id", String, versions="8+"),
        Field("member_id", String, versions="9+", nullable="9+", default=None),
        Field("member_epoch", Int32, versions="9+", default=-1),
        Field("topics", Array([
            Field("name", String, versions="8-9"),
            Field("topic_id", Uuid, versions="10+"),
            Field("partition_indexes", Array(Int32), versions="8+"),
        ]), versions="8+", nullable="8+"),
    ]), versions="8+"),
    Field("require_stable", Boolean, versions="7+"),
])

RESPONSE = Message("OffsetFetchResponse", api_key=9, valid="0-10", flexible="6+", fields=[
    Field("throttle_time_ms", Int32, versions="3+"),
    Field("topics", Array([
        Field("name", String, versions="0-7"),
        Field("partitions", Array([
            Field("partition_index", Int32, versions="0-7"),
            Field("committed_offset", Int64, versions="0-7"),
            Field("committed_leader_epoch", Int32, versions="5-7", default=-1),
            Field("metadata", String, versions="0-7", nullable="0-7"),
            Field("error_code", Int16, versions="0-7"),
        ]), versions="0-7"),
    ]), versions="0-7"),
    Field("error_code", Int16, versions="2-7"),
    Field("groups", Array([
        Field("group_id", String, versions="8+"),
        Field("topics", Array([
            Field("name", String, versions="8-9"),
            Field("topic_id", Uuid, versions="10+"),
            Field("partitions", Array([
                Field("partition_index", Int32, versions="8+"),
                Field("committed_offset", Int64, versions="8+"),
                Field("committed_leader_epoch", Int32, versions="8+", default=-1),
                Field("metadata", String, versions="8+", nullable="8+"),
                Field("error_code", Int16, versions="8+"),
            ]), versions="8+"),
        ]), versions="8+"),
        Field("error_code", Int16, versions="8+"),
    ]), versions="8+"),
])
