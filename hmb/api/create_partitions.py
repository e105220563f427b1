"""CreatePartitions v0-v3: give existing topics more partitions, with Kafka's per-topic errors.

Each topic is judged on its own, in Kafka's order of checks: a name given
twice (INVALID_REQUEST, every occurrence), an unknown topic or one being
deleted (UNKNOWN_TOPIC_OR_PARTITION), a count that is not an increase
(INVALID_PARTITIONS), then the assignments.  ``assignments``, when given,
lists the replicas of each *new* partition, one entry per partition added;
on this single broker each must be exactly ``[this broker]``, the topic's
replication factor of 1 (INVALID_REPLICA_ASSIGNMENT otherwise).

As for CreateTopics, one request adds at most
``create_topics.MAX_RECORDS_PER_REQUEST`` partitions (Kafka's bound on one
controller operation): beyond that every topic gets POLICY_VIOLATION and
nothing changes.  ``validate_only`` runs every check and creates nothing.
New partitions are opened by the log manager, which lets other clients run
between partitions and publishes the new count only when every partition
exists; partitions are empty and take the topic's configs.  Where keyed
records go afterwards is the producers' choice (they hash over the new
count, as with Kafka).  v1-v3 change nothing the broker answers (v2 is the
flexible encoding); ``timeout_ms`` never expires, creation being done when
the answer leaves.

In a cluster the count is the cluster's; the receiving broker rewrites the
topic's assignment znode with the new partitions (placed over the live
brokers, or as the request assigns them: one live broker each), the
controller places their leaders, and the answer waits (``timeout_ms``) until
this broker has opened them; REQUEST_TIMED_OUT when not yet.
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import TYPE_CHECKING, Any

from hmb.api.context import Reply, RequestContext
from hmb.api.create_topics import EXCESSIVE_BATCH, MAX_RECORDS_PER_REQUEST
from hmb.api.registry import handles
from hmb.log.manager import PartitionCountError
from kproto import ApiKey, ErrorCode

if TYPE_CHECKING:
    from hmb.cluster.node import ClusterNode

log = logging.getLogger(__name__)


class _RefusedError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def _check_assignments(ctx: RequestContext, topic: Any, added: int) -> None:
    """Kafka's checks of explicit replicas for the new partitions, for one broker."""
    if topic.assignments is None:
        return
    if len(topic.assignments) != added:
        raise _RefusedError(
            ErrorCode.INVALID_REPLICA_ASSIGNMENT,
            f"Attempted to add {added} additional partition(s), "
            f"but only {len(topic.assignments)} assignment(s) were specified.",
        )
    node = ctx.config.node_id
    cluster = ctx.services.cluster
    for i, assignment in enumerate(topic.assignments):
        replicas = list(assignment.broker_ids)
        if not replicas:
            raise _RefusedError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, f"new partition {i}: no replicas")
        if len(set(replicas)) != len(replicas):
            raise _RefusedError(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT, f"new partition {i}: duplicate replicas {replicas}"
            )
        if cluster is not None:
            factor = _factor(cluster, topic.name)
            if len(replicas) != factor or any(b not in cluster.view.brokers for b in replicas):
                raise _RefusedError(
                    ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                    f"new partition {i}: replicas {replicas}; the topic's partitions have {factor} "
                    "replica(s), each on a live broker",
                )
        elif replicas != [node]:
            raise _RefusedError(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                f"new partition {i}: replicas {replicas}, but the only broker is {node} "
                "and the topic's replication factor is 1",
            )


def _factor(cluster: ClusterNode, name: str) -> int:
    """The replication factor of the cluster's topic ``name`` (its first partition's replicas)."""
    assignment = cluster.view.topics.get(name)
    return len(assignment.partitions[0]) if assignment is not None and 0 in assignment.partitions else 1


def _current_count(ctx: RequestContext, name: str) -> int | None:
    """The topic's partition count: the cluster's in a cluster, else the local log's; None: no topic."""
    cluster = ctx.services.cluster
    if cluster is not None:
        assignment = cluster.view.topics.get(name)
        return None if assignment is None or name in cluster.view.deleting else len(assignment.partitions)
    logs = ctx.logs.topics.get(name)
    return None if logs is None or name in ctx.logs.deleting else len(logs)


def _check_one(ctx: RequestContext, topic: Any, duplicated: bool) -> int:
    """How many partitions ``topic`` gains, or :class:`_RefusedError`."""
    if duplicated:
        raise _RefusedError(ErrorCode.INVALID_REQUEST, "Duplicate topic name.")
    current = _current_count(ctx, topic.name)
    if current is None:
        raise _RefusedError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"topic {topic.name!r} does not exist")
    if topic.count < current:
        raise _RefusedError(
            ErrorCode.INVALID_PARTITIONS,
            f"The topic {topic.name} currently has {current} partition(s); "
            f"{topic.count} would not be an increase.",
        )
    if topic.count == current:
        raise _RefusedError(ErrorCode.INVALID_PARTITIONS, f"Topic already has {current} partition(s).")
    _check_assignments(ctx, topic, topic.count - current)
    return topic.count - current


async def _grow_in_cluster(ctx: RequestContext, cluster: ClusterNode, topic: Any) -> tuple[int, str | None]:
    """Rewrite the assignment with the new partitions, then wait (``timeout_ms``) until the
    controller has placed them and this broker has opened them."""
    from hmb.cluster.topics import TopicChangedError

    current = _current_count(ctx, topic.name) or 0
    if topic.assignments is not None:
        new = {current + i: tuple(a.broker_ids) for i, a in enumerate(topic.assignments)}
    else:
        placed = cluster.place(topic.count - current, _factor(cluster, topic.name))
        new = {current + p: replicas for p, replicas in placed.items()}
    try:
        await cluster.add_partitions(topic.name, current, new)
    except TopicChangedError as exc:
        return ErrorCode.INVALID_PARTITIONS, str(exc)

    def grown(view: Any) -> bool:
        local = ctx.logs.topics.get(topic.name)
        return view.ready(topic.name) and local is not None and len(local) >= topic.count

    if not await cluster.wait_until(grown, max(ctx.request.body.timeout_ms, 0) / 1000):
        return ErrorCode.REQUEST_TIMED_OUT, "the partitions are added; they have no leader yet"
    return ErrorCode.NONE, None


async def _grow(ctx: RequestContext, topic: Any) -> tuple[int, str | None]:
    if ctx.services.cluster is not None:
        return await _grow_in_cluster(ctx, ctx.services.cluster, topic)
    try:
        await ctx.logs.add_partitions_async(topic.name, topic.count)
    except KeyError:  # deleted while the request waited
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"topic {topic.name!r} does not exist"
    except PartitionCountError as exc:  # another request grew it first
        return ErrorCode.INVALID_PARTITIONS, str(exc)
    except OSError as exc:
        log.error("adding partitions to %s failed: %s", topic.name, exc)
        return ErrorCode.KAFKA_STORAGE_ERROR, f"creating the partition logs failed: {exc.strerror}"
    return ErrorCode.NONE, None


@handles(ApiKey.CREATE_PARTITIONS, versions=(0, 3))
async def handle(ctx: RequestContext) -> Reply:
    body = ctx.request.body
    names = Counter(t.name for t in body.topics)
    results: list[dict[str, Any]] = []
    planned: list[tuple[dict[str, Any], Any, int]] = []
    for topic in body.topics:
        result: dict[str, Any] = {"name": topic.name, "error_code": ErrorCode.NONE, "error_message": None}
        try:
            planned.append((result, topic, _check_one(ctx, topic, names[topic.name] > 1)))
        except _RefusedError as exc:
            result.update(error_code=exc.code, error_message=str(exc))
        results.append(result)
    if sum(added for *_, added in planned) > MAX_RECORDS_PER_REQUEST:
        total = sum(added for *_, added in planned)
        log.warning("refusing CreatePartitions for %d partitions: more than Kafka's bound", total)
        for result in results:
            result.update(error_code=ErrorCode.POLICY_VIOLATION, error_message=EXCESSIVE_BATCH)
    elif not body.validate_only:
        for result, topic, _ in planned:
            code, message = await _grow(ctx, topic)
            result.update(error_code=code, error_message=message)
    return {"throttle_time_ms": 0, "results": results}
