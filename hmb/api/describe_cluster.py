"""DescribeCluster v0-v2: this broker, the cluster id, and this broker as the controller.

The broker is the cluster's only member and its controller (as Metadata
says), has no rack and is never fenced (v2; ``include_fenced_brokers``
changes nothing).  v1's ``endpoint_type`` asks for the brokers' (1) or the
controllers' (2) endpoints: this is a broker endpoint, so Kafka's brokers
answer 2 with UNSUPPORTED_ENDPOINT_TYPE, and so does hmb.  The cluster's
authorized operations are INT32_MIN unless asked for, then the bit field of
:func:`hmb.api.authz.authorized_operations` (the authoriser's answer).
"""

from __future__ import annotations

from hmb.api.authz import OPERATIONS_NOT_ASKED as OMITTED
from hmb.api.authz import authorized_operations
from hmb.api.context import Reply, RequestContext
from hmb.api.registry import handles
from hmb.security.acl import CLUSTER_NAME, ResourceType
from kproto import ApiKey, ErrorCode

BROKER_ENDPOINT = 1
ENDPOINT_TYPES = {1: "BROKER", 2: "CONTROLLER"}  # Kafka's EndpointType ids


@handles(ApiKey.DESCRIBE_CLUSTER, versions=(0, 2))
async def handle(ctx: RequestContext) -> Reply:
    body = ctx.request.body
    node = ctx.config.node_id
    asked = body.get("endpoint_type", BROKER_ENDPOINT)
    if asked != BROKER_ENDPOINT:  # Kafka's answer: the error, every other field at its default
        return {
            "throttle_time_ms": 0,
            "error_code": ErrorCode.UNSUPPORTED_ENDPOINT_TYPE,
            "error_message": "The request was sent to an endpoint of type BROKER, "
            f"but we wanted an endpoint of type {ENDPOINT_TYPES.get(asked, asked)}",
            "endpoint_type": BROKER_ENDPOINT,
            "cluster_id": "",
            "controller_id": -1,
            "brokers": [],
            "cluster_authorized_operations": OMITTED,
        }
    adv = ctx.services.advertised()
    asked_ops = body.include_cluster_authorized_operations
    return {
        "throttle_time_ms": 0,
        "error_code": ErrorCode.NONE,
        "error_message": None,
        "endpoint_type": BROKER_ENDPOINT,
        "cluster_id": ctx.logs.cluster_id,
        "controller_id": node,
        "brokers": [
            {"broker_id": node, "host": adv.host, "port": adv.port, "rack": None, "is_fenced": False}
        ],
        "cluster_authorized_operations": authorized_operations(ctx, ResourceType.CLUSTER, CLUSTER_NAME)
        if asked_ops
        else OMITTED,
    }
