"""ElectLeaders v0-v2: move partitions' leadership to their preferred replica, or elect a
leader for leaderless ones (unclean).

Alter on the cluster is required (else CLUSTER_AUTHORIZATION_FAILED).  In a
cluster only the controller answers (Kafka's ZooKeeper mode: the admin client
sends it to the controller Metadata names); another broker says
NOT_CONTROLLER.  The controller's next step runs the election
(:func:`hmb.cluster.controller.elect`, rules in :mod:`hmb.cluster.elections`)
and the answer gives each partition's outcome: NONE (a new leader, leader
epoch + 1), ELECTION_NOT_NEEDED, PREFERRED_LEADER_NOT_AVAILABLE,
ELIGIBLE_LEADERS_NOT_AVAILABLE or UNKNOWN_TOPIC_OR_PARTITION.  A null list
asks for every partition.  v0 knows only the preferred election and has no
top-level error: a refusal is then written on every partition.

Alone, the broker leads every partition of its own (one replica, the
preferred one): every known partition is ELECTION_NOT_NEEDED.
"""

from __future__ import annotations

from typing import Any

import trio

from hmb.api.authz import cluster_allowed
from hmb.api.context import Reply, RequestContext
from hmb.api.registry import handles
from hmb.security.acl import Operation
from kproto import ApiKey, ErrorCode

PREFERRED, UNCLEAN = 0, 1  # election_type
NOT_NEEDED = "Leader election not needed for topic partition."
#: the controller's election outcome (hmb.cluster.elections.Outcome, by name) -> Kafka's answer
_ANSWERS: dict[str, tuple[int, str | None]] = {
    "ELECTED": (ErrorCode.NONE, None),
    "NOT_NEEDED": (ErrorCode.ELECTION_NOT_NEEDED, NOT_NEEDED),
    "PREFERRED_NOT_AVAILABLE": (
        ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE,
        "The preferred leader was not available.",
    ),
    "NO_ELIGIBLE_LEADER": (
        ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE,
        "Eligible topic partition leaders are not available.",
    ),
    "UNKNOWN_PARTITION": (
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        "This server does not host this topic-partition.",
    ),
    "CHANGED": (ErrorCode.REQUEST_TIMED_OUT, "The partition's state changed during the election; ask again."),
}

Outcome = dict[tuple[str, int], tuple[int, str | None]]


def _asked(ctx: RequestContext) -> list[tuple[str, int]] | None:
    topics = ctx.request.body.topic_partitions
    if topics is None:
        return None
    return [(t.topic, int(p)) for t in topics for p in t.partitions]


def _every_partition(ctx: RequestContext) -> list[tuple[str, int]]:
    return sorted((t, p) for t, parts in ctx.logs.topics.items() for p in range(len(parts)))


def _alone(ctx: RequestContext, asked: list[tuple[str, int]]) -> Outcome:
    out: Outcome = {}
    for topic, p in asked:
        parts = ctx.logs.topics.get(topic)
        known = parts is not None and 0 <= p < len(parts)
        out[(topic, p)] = (
            (ErrorCode.ELECTION_NOT_NEEDED, NOT_NEEDED)
            if known
            else (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "unknown partition")
        )
    return out


def _reply(code: int, outcome: Outcome) -> dict[str, Any]:
    by_topic: dict[str, list[dict[str, Any]]] = {}
    for (topic, p), (error, message) in outcome.items():
        by_topic.setdefault(topic, []).append(
            {"partition_id": p, "error_code": error, "error_message": message}
        )
    return {
        "throttle_time_ms": 0,
        "error_code": code,
        "replica_election_results": [{"topic": t, "partition_result": r} for t, r in by_topic.items()],
    }


def _refuse(code: int, asked: list[tuple[str, int]]) -> dict[str, Any]:
    """A request-wide refusal: the top-level code (v1+), and on every partition asked for."""
    return _reply(code, {tp: (code, None) for tp in asked})


@handles(ApiKey.ELECT_LEADERS, versions=(0, 2))
async def handle(ctx: RequestContext) -> Reply:
    version = ctx.request.version
    body = ctx.request.body
    asked = _asked(ctx)
    election_type = body.get("election_type", PREFERRED) if version >= 1 else PREFERRED
    if not cluster_allowed(ctx, Operation.ALTER):
        return _refuse(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, asked or [])
    if election_type not in (PREFERRED, UNCLEAN):
        return _refuse(ErrorCode.INVALID_REQUEST, asked or [])
    cluster = ctx.services.cluster
    if cluster is None:
        everything = asked if asked is not None else _every_partition(ctx)
        return _reply(ErrorCode.NONE, _alone(ctx, everything))
    if cluster.epoch is None:
        return _refuse(ErrorCode.NOT_CONTROLLER, asked or [])
    try:
        results = await cluster.elect(election_type, asked, max(body.timeout_ms, 0) / 1000)
    except trio.TooSlowError:  # the controller's step did not come in time
        return _refuse(ErrorCode.REQUEST_TIMED_OUT, asked or [])
    if results is None:
        return _refuse(ErrorCode.NOT_CONTROLLER, asked or [])
    return _reply(ErrorCode.NONE, {tp: _ANSWERS[outcome.name] for tp, outcome in results.items()})
