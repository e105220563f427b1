"""DescribeCluster (api key 60), versions 0-2.

The cluster's brokers, controller and id, for admin clients (KIP-700).

What each version changes (derived from the field ranges):

* v0: flexible from the start
* v1: request adds ``endpoint_type``; response adds ``endpoint_type``
* v2: request adds ``include_fenced_brokers``; response adds ``brokers.is_fenced``
"""

# Written by scripts/gen_kproto_messages.py from Kafka's JSON message specs:
# change the script's tables and run it again rather than editing this file.

from __future__ import annotations

from kproto.primitives import Boolean, Int8, Int16, Int32
from kproto.schema import Array, Field, Message, String

REQUEST = Message("DescribeClusterRequest", api_key=60, valid="0-2", flexible="0+", fields=[
    Field("include_cluster_authorized_operations", Boolean),
    Field("endpoint_type", Int8, versions="1+", default=1),
    Field("include_fenced_brokers", Boolean, versions="2+"),
])

RESPONSE = Message("DescribeClusterResponse", api_key=60, valid="0-2", flexible="0+", fields=[
    Field("throttle_time_ms", Int32),
    Field("error_code", Int16),
    Field("error_message", String, nullable="0+", default=None),
    Field("endpoint_type", Int8, versions="1+", default=1),
    Field("cluster_id", String),
    Field("controller_id", Int32, default=-1),
    Field("brokers", Array([
        Field("broker_id", Int32),
        Field("host", String),
        Field("port", Int32),
        Field("rack", String, nullable="0+", default=None),
        Field("is_fenced", Boolean, versions="2+"),
    ])),
    Field("cluster_authorized_operations", Int32, default=-2147483648),
])
