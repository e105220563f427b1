"""ControlledShutdown v0-v3: a stopping broker asks the controller to move its leaderships away.

Inter-broker (ClusterAction on the cluster, else CLUSTER_AUTHORIZATION_FAILED).
Only the controller answers it: another broker says NOT_CONTROLLER and the
asker reads ZooKeeper again.  The controller marks the broker as shutting
down, lets its next step move each partition the broker leads to another
live in-sync replica (leader epoch + 1) and take the broker out of every ISR
(:mod:`hmb.cluster.elections`), and answers the partitions the broker still
leads that have other replicas: the broker asks again after its back-off.
A partition with one replica is never listed: it goes offline with its
broker, as in Kafka.  An id that is not registered is BROKER_NOT_AVAILABLE.

Alone, the broker is its own controller and leads only partitions with one
replica: its own id is answered at once with nothing remaining.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hmb.api.authz import cluster_allowed
from hmb.api.context import Reply, RequestContext
from hmb.api.registry import handles
from hmb.security.acl import Operation
from kproto import ApiKey, ErrorCode

STEP_TIMEOUT_S = 30.0  # how long the controller's next step may take to come


def _answer(code: int, remaining: Sequence[tuple[str, int]] = ()) -> dict[str, Any]:
    return {
        "error_code": code,
        "remaining_partitions": [{"topic_name": t, "partition_index": p} for t, p in remaining],
    }


@handles(ApiKey.CONTROLLED_SHUTDOWN, versions=(0, 3))
async def handle(ctx: RequestContext) -> Reply:
    if not cluster_allowed(ctx, Operation.CLUSTER_ACTION):
        return _answer(ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    broker_id = ctx.request.body.broker_id
    cluster = ctx.services.cluster
    if cluster is None:
        return _answer(ErrorCode.NONE if broker_id == ctx.config.node_id else ErrorCode.BROKER_NOT_AVAILABLE)
    if cluster.epoch is None:
        return _answer(ErrorCode.NOT_CONTROLLER)
    if broker_id not in cluster.view.brokers:
        return _answer(ErrorCode.BROKER_NOT_AVAILABLE)
    remaining = await cluster.shut_down_broker(broker_id, STEP_TIMEOUT_S)
    if remaining is None:
        return _answer(ErrorCode.NOT_CONTROLLER)
    return _answer(ErrorCode.NONE, remaining)
