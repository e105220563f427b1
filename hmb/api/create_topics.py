"""CreateTopics v0-v7: create topics on this one broker, with Kafka's per-topic errors.

Each topic is judged on its own, in Kafka's order of checks: a name given
twice in one request (INVALID_REQUEST), an illegal name
(INVALID_TOPIC_EXCEPTION), an existing topic (TOPIC_ALREADY_EXISTS), then
the layout.  The layout is either counts or an explicit replica assignment,
never both (INVALID_REQUEST):

* counts: ``num_partitions`` > 0 (INVALID_PARTITIONS otherwise) and a
  replication factor no larger than the live brokers (one alone;
  INVALID_REPLICATION_FACTOR otherwise, in Kafka's words); -1 asks for the
  broker's defaults (``num.partitions``, ``default.replication.factor`` in a
  cluster, 1 alone) in every version, as
  Kafka 4.x's controller takes it (KIP-464 made clients send it from v4, but
  KafkaJS sends a replication factor of -1 with v3 and Kafka creates the
  topic);
* an assignment: partitions numbered 0..n-1, each on exactly this broker
  alone, on distinct live brokers in a cluster (INVALID_REPLICA_ASSIGNMENT
  otherwise).

One request creates at most :data:`MAX_RECORDS_PER_REQUEST` records, a
record per topic and per partition, as Kafka's controller bounds every
operation (``QuorumController.MAX_RECORDS_PER_USER_OP``): beyond that every
topic of the request is answered POLICY_VIOLATION, "Unable to perform
excessively large batch operation.", and nothing is created.  Without the
bound one ``num_partitions = 2**31 - 1`` would have the broker make
directories until its disk or file descriptors ran out, the event loop
blocked all along (creating a partition costs ~1 ms).

Per-topic configs (``retention.ms``, ``segment.bytes``, ...) are checked
against the settings table: an unknown name, a bad value or a null value is
INVALID_CONFIG with a message, and the topic is not created.  Accepted
configs are stored with the topic and override the broker's defaults for it
(:mod:`hmb.log.settings_store`).  ``validate_only`` (v1+) runs every check
and creates nothing.  Creation is synchronous, so ``timeout_ms`` never
expires.  v5+ answers what each topic was made with (partition count,
replication factor, every setting with its source), validate_only
included; v7+ its topic id (all zeros when only validated).
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import TYPE_CHECKING, Any, NamedTuple

from hmb.api.authz import may_create_topic
from hmb.api.context import Reply, RequestContext
from hmb.api.registry import handles
from hmb.config import ConfigError
from hmb.log.manager import (
    InvalidTopicError,
    TopicBeingCreatedError,
    TopicBeingDeletedError,
    validate_topic_name,
)
from hmb.log.topic_ids import ZERO as ZERO_ID

if TYPE_CHECKING:
    from hmb.cluster.node import ClusterNode
from kproto import ApiKey, ErrorCode

log = logging.getLogger(__name__)

MAX_RECORDS_PER_REQUEST = 10_000  # Kafka's QuorumController.MAX_RECORDS_PER_USER_OP
EXCESSIVE_BATCH = "Unable to perform excessively large batch operation."
DEFAULT = -1  # num_partitions / replication_factor: "the broker's default" (v4+), or "see assignments"


class _RefusedError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def _partition_count(ctx: RequestContext, topic: Any) -> tuple[int, int]:
    """How many partitions ``topic`` asks for and its replication factor, or :class:`_RefusedError`."""
    node = ctx.config.node_id
    if topic.assignments:
        if topic.num_partitions != DEFAULT or topic.replication_factor != DEFAULT:
            raise _RefusedError(
                ErrorCode.INVALID_REQUEST,
                "both num_partitions or replication_factor and replica assignments were set",
            )
        indexes = sorted(a.partition_index for a in topic.assignments)
        if indexes != list(range(len(indexes))):
            raise _RefusedError(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT, f"partitions must be numbered 0..n-1, got {indexes}"
            )
        cluster = ctx.services.cluster
        for a in topic.assignments:
            if cluster is not None:
                _check_cluster_replicas(cluster, a.partition_index, list(a.broker_ids))
            elif list(a.broker_ids) != [node]:
                raise _RefusedError(
                    ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                    f"partition {a.partition_index}: replicas {list(a.broker_ids)}, "
                    f"but the only broker is {node}",
                )
        return len(indexes), len(topic.assignments[0].broker_ids)
    count = topic.num_partitions
    if count == DEFAULT:
        count = ctx.config.num_partitions
    if count <= 0:
        raise _RefusedError(ErrorCode.INVALID_PARTITIONS, "number of partitions must be larger than 0")
    factor = topic.replication_factor
    if factor == DEFAULT:
        factor = ctx.config.default_replication_factor if ctx.services.cluster is not None else 1
    if factor <= 0:
        raise _RefusedError(ErrorCode.INVALID_REPLICATION_FACTOR, "replication factor must be larger than 0")
    live = 1 if ctx.services.cluster is None else len(ctx.services.cluster.view.brokers)
    if factor > live:  # Kafka's words
        raise _RefusedError(
            ErrorCode.INVALID_REPLICATION_FACTOR,
            f"Replication factor: {factor} larger than available brokers: {live}.",
        )
    return count, factor


def _check_cluster_replicas(cluster: ClusterNode, partition: int, replicas: list[int]) -> None:
    """In a cluster an explicit assignment names distinct live brokers for each partition."""
    if not replicas or len(set(replicas)) != len(replicas):
        raise _RefusedError(
            ErrorCode.INVALID_REPLICA_ASSIGNMENT,
            f"partition {partition}: replicas {replicas} must be distinct brokers, at least one",
        )
    for broker in replicas:
        if broker not in cluster.view.brokers:
            raise _RefusedError(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                f"partition {partition}: broker {broker} is not a live broker of the cluster",
            )


class _Plan(NamedTuple):
    """A topic that passed every check: its answer so far, its partition count and settings
    (in a cluster, the explicit replica assignment when the request gave one)."""

    result: dict[str, Any]
    name: str
    partitions: int
    overrides: dict[str, str]
    assignment: dict[int, tuple[int, ...]] | None = None
    replication_factor: int = 1


def _check_one(ctx: RequestContext, topic: Any, duplicated: bool) -> tuple[int, int, dict[str, str]]:
    """The partition count, replication factor and settings ``topic`` may be created with
    (or :class:`_RefusedError`)."""
    logs = ctx.logs
    if duplicated:
        raise _RefusedError(
            ErrorCode.INVALID_REQUEST, f"topic {topic.name!r} appears more than once in the request"
        )
    if not may_create_topic(ctx, topic.name):
        raise _RefusedError(ErrorCode.TOPIC_AUTHORIZATION_FAILED, "Authorization failed.")
    try:
        validate_topic_name(topic.name)
    except InvalidTopicError as exc:
        raise _RefusedError(ErrorCode.INVALID_TOPIC_EXCEPTION, str(exc)) from None
    cluster = ctx.services.cluster
    if topic.name in logs.topics or (cluster is not None and topic.name in cluster.view.topics):
        raise _RefusedError(ErrorCode.TOPIC_ALREADY_EXISTS, f"topic {topic.name!r} already exists")
    if topic.name in logs.creating:  # another request is creating it right now
        raise _RefusedError(ErrorCode.TOPIC_ALREADY_EXISTS, f"topic {topic.name!r} is being created")
    if topic.name in logs.deleting:  # as Kafka answered while a deletion was under way
        raise _RefusedError(ErrorCode.TOPIC_ALREADY_EXISTS, f"topic {topic.name!r} is marked for deletion")
    count, factor = _partition_count(ctx, topic)
    return count, factor, overrides_of(ctx, topic)


def overrides_of(ctx: RequestContext, topic: Any) -> dict[str, str]:
    """The topic's configs as ``{name: value}``, checked; :class:`_RefusedError` (INVALID_CONFIG) if bad."""
    overrides: dict[str, str] = {}
    for c in topic.configs or ():
        if c.value is None:
            raise _RefusedError(
                ErrorCode.INVALID_CONFIG, f"Null value not supported for topic configs: {c.name}"
            )
        if c.name in overrides:
            raise _RefusedError(ErrorCode.INVALID_CONFIG, f"topic config {c.name} is given twice")
        overrides[c.name] = c.value
    try:
        ctx.logs.config.with_overrides(overrides)
    except ConfigError as exc:
        raise _RefusedError(ErrorCode.INVALID_CONFIG, str(exc)) from None
    return overrides


async def _create_in_cluster(
    ctx: RequestContext, cluster: ClusterNode, plan: _Plan
) -> tuple[int, str | None]:
    """Write the topic's znodes, then wait (``timeout_ms``) until the controller has placed every
    partition and this broker has opened its copy; REQUEST_TIMED_OUT when it has not yet."""
    from hmb.cluster.assignment import PlacementError
    from hmb.cluster.topics import TopicExistsError

    try:
        placed = plan.assignment or cluster.place(plan.partitions, plan.replication_factor)
        await cluster.create_topic(plan.name, placed, plan.overrides)
    except TopicExistsError:
        raise _RefusedError(ErrorCode.TOPIC_ALREADY_EXISTS, f"topic {plan.name!r} already exists") from None
    except PlacementError as exc:
        raise _RefusedError(ErrorCode.INVALID_REPLICATION_FACTOR, str(exc)) from None
    timeout_s = max(ctx.request.body.timeout_ms, 0) / 1000
    if not await cluster.wait_until(lambda v: v.ready(plan.name) and plan.name in ctx.logs.topics, timeout_s):
        return ErrorCode.REQUEST_TIMED_OUT, "the topic is created; its partitions have no leader yet"
    return ErrorCode.NONE, None


async def _create_one(ctx: RequestContext, plan: _Plan) -> tuple[int, str | None]:
    if ctx.services.cluster is not None:
        return await _create_in_cluster(ctx, ctx.services.cluster, plan)
    try:
        await ctx.logs.create_topic_async(plan.name, plan.partitions, plan.overrides)
    except (TopicBeingCreatedError, TopicBeingDeletedError) as exc:  # another request got there first
        raise _RefusedError(ErrorCode.TOPIC_ALREADY_EXISTS, str(exc)) from None
    except OSError as exc:
        log.error("creating topic %s failed: %s", plan.name, exc)
        raise _RefusedError(
            ErrorCode.KAFKA_STORAGE_ERROR, f"creating the partition logs failed: {exc.strerror}"
        ) from None
    return ErrorCode.NONE, None


def _created(ctx: RequestContext, plan: _Plan) -> None:
    """v5+: what the topic was (or, validating, would be) made with: partitions,
    replication, every setting with its source; v7+ its id."""
    if plan.name in ctx.logs.topics:
        entries = ctx.settings.describe_topic(plan.name)
    else:
        entries = ctx.settings.describe_new_topic(plan.overrides)
    plan.result.update(
        num_partitions=plan.partitions,
        replication_factor=plan.replication_factor,
        topic_id=ctx.logs.topic_ids.get(plan.name, ZERO_ID),
        configs=[
            {
                "name": e.name,
                "value": None if e.sensitive else e.value,
                "read_only": e.read_only,
                "config_source": int(e.source),
                "is_sensitive": e.sensitive,
            }
            for e in entries
        ],
    )


@handles(ApiKey.CREATE_TOPICS, versions=(0, 7))
async def handle(ctx: RequestContext) -> Reply:
    body = ctx.request.body
    validate_only = bool(ctx.request.version >= 1 and body.validate_only)
    names = Counter(t.name for t in body.topics)
    results: list[dict[str, Any]] = []
    planned: list[_Plan] = []
    for topic in body.topics:
        result: dict[str, Any] = {
            "name": topic.name,
            "error_code": ErrorCode.NONE,
            "error_message": None,
            # v5+: what a refused topic answers (a created one gets its values in _created)
            "num_partitions": -1,
            "replication_factor": -1,
            "configs": [],
            "topic_id": ZERO_ID,
        }
        try:
            count, factor, overrides = _check_one(ctx, topic, names[topic.name] > 1)
            explicit = {a.partition_index: tuple(a.broker_ids) for a in topic.assignments or ()}
            planned.append(_Plan(result, topic.name, count, overrides, explicit or None, factor))
        except _RefusedError as exc:
            result.update(error_code=exc.code, error_message=str(exc))
        results.append(result)
    if sum(1 + plan.partitions for plan in planned) > MAX_RECORDS_PER_REQUEST:
        log.warning(
            "refusing CreateTopics for %d partitions: more than Kafka's bound",
            sum(p.partitions for p in planned),
        )
        for result in results:
            result.update(error_code=ErrorCode.POLICY_VIOLATION, error_message=EXCESSIVE_BATCH)
    else:
        for plan in planned:
            if not validate_only:
                try:
                    code, message = await _create_one(ctx, plan)
                except _RefusedError as exc:
                    code, message = exc.code, str(exc)
                plan.result.update(error_code=code, error_message=message)
            if ctx.request.version >= 5 and plan.result["error_code"] == ErrorCode.NONE:
                _created(ctx, plan)
    return {"throttle_time_ms": 0, "topics": results}
