"""Metadata and coordinator answers in a cluster: the whole cluster, from the ZooKeeper view.

Every broker answers the same picture: the registered brokers (each at the
endpoint of the listener the request came in on, with its rack), the
controller, and per partition its leader, replicas, in-sync replicas and
leader epoch from the state znodes.  A partition without a leader (its one
replica's broker is down, or the controller has not placed it yet) is
LEADER_NOT_AVAILABLE with leader -1, and its replica listed as offline.
A broker cut off from ZooKeeper does not name itself leader of the
partitions its stale view says it leads: it names the broker the
controller's failover rule would elect (the first other registered ISR
member; none: leader -1), so a client with a connection to this broker only
goes there and learns the truth from it, instead of being sent back here
until its records time out.
Auto-creation writes the topic's assignment and answers LEADER_NOT_AVAILABLE,
as Kafka does, until the controller has placed it.

A group's coordinator is the leader of the ``__consumer_offsets`` partition
its id hashes to: ``abs(hashCode(group)) % partitions``, with Java's
``String.hashCode``, as Kafka computes it; a transactional id's, the leader
of its ``__transaction_state`` partition, the same way.
"""

from __future__ import annotations

import base64
import logging
from typing import TYPE_CHECKING, Any

from hmb.api.context import RequestContext
from hmb.groups.offset_partitions import coordinator_partition
from hmb.groups.offsets import TOPIC_CONFIG as OFFSETS_TOPIC_CONFIG
from hmb.log.topic_ids import ZERO as ZERO_ID
from kproto import ErrorCode

# The handler registry imports this module in every broker: the cluster's modules are
# imported where a cluster is used (a broker alone neither needs nor loads them).
if TYPE_CHECKING:
    from hmb.cluster.node import ClusterNode
    from hmb.cluster.view import ClusterView

log = logging.getLogger(__name__)


def coordinator(cluster: ClusterNode, group: str, topic: str | None = None) -> int:
    """The broker coordinating ``group`` (a transactional id with ``topic`` ``__transaction_state``),
    or -1 while the key's partition of that topic has no leader."""
    from hmb.cluster.layout import NO_LEADER, OFFSETS_TOPIC

    topic = topic or OFFSETS_TOPIC
    assignment = cluster.view.topics.get(topic)
    if assignment is None:
        return NO_LEADER
    return cluster.view.leader(topic, coordinator_partition(group, len(assignment.partitions)))


def brokers(ctx: RequestContext, view: ClusterView) -> list[dict[str, Any]]:
    out = []
    for broker_id, reg in sorted(view.brokers.items()):
        ep = reg.endpoint(ctx.session.listener)
        out.append({"node_id": broker_id, "host": ep.host, "port": ep.port, "rack": reg.rack})
    return out


def partitions(view: ClusterView, topic: str, cut_off: int | None = None) -> list[dict[str, Any]]:
    """``topic``'s partitions from ``view``; ``cut_off``: this broker, when its view is stale
    (it is not named leader of anything)."""
    from hmb.cluster.layout import NO_LEADER

    assignment = view.topics[topic]
    out = []
    for p, replicas in sorted(assignment.partitions.items()):
        state = view.states.get((topic, p))
        leader = NO_LEADER if state is None else state.leader
        if state is not None and leader == cut_off:
            leader = next((b for b in state.isr if b != cut_off and b in view.brokers), NO_LEADER)
        out.append(
            {
                "error_code": ErrorCode.LEADER_NOT_AVAILABLE if leader == NO_LEADER else ErrorCode.NONE,
                "partition_index": p,
                "leader_id": leader,
                "leader_epoch": -1 if state is None else state.leader_epoch,
                "replica_nodes": list(replicas),
                "isr_nodes": [] if state is None else list(state.isr),
                "offline_replicas": [b for b in replicas if b not in view.brokers],
            }
        )
    return out


def topic_id(view: ClusterView, topic: str) -> bytes:
    text = view.topics[topic].topic_id
    return base64.urlsafe_b64decode(text + "==") if text else ZERO_ID


async def create_offsets_topic(cluster: ClusterNode) -> None:
    """Make ``__consumer_offsets`` on its first use, as Kafka does: placed over the brokers alive
    then, so a cluster started broker by broker spreads its groups over all of them."""
    from hmb.cluster.assignment import PlacementError
    from hmb.cluster.layout import OFFSETS_TOPIC
    from hmb.cluster.topics import TopicExistsError

    settings = cluster.config
    try:
        placed = cluster.place(
            settings.offsets_topic_num_partitions, settings.offsets_topic_replication_factor
        )
        await cluster.create_topic(OFFSETS_TOPIC, placed, dict(OFFSETS_TOPIC_CONFIG))
    except (TopicExistsError, PlacementError) as exc:  # made meanwhile, or too few brokers yet
        log.info("creating %s: %s", OFFSETS_TOPIC, exc)


async def create_txn_state_topic(cluster: ClusterNode) -> None:
    """Make ``__transaction_state`` on its first use (FindCoordinator for a transactional id), as
    Kafka does: ``transaction.state.log.num.partitions`` partitions of
    ``transaction.state.log.replication.factor`` replicas (none while fewer brokers are alive),
    compacted, with ``min.insync.replicas`` of ``transaction.state.log.min.isr``."""
    from hmb.cluster.assignment import PlacementError
    from hmb.cluster.layout import TXN_STATE_TOPIC
    from hmb.cluster.topics import TopicExistsError
    from hmb.txn.state_log import TOPIC_CONFIG as TXN_STATE_CONFIG

    settings = cluster.config
    config = {**TXN_STATE_CONFIG, "min.insync.replicas": str(settings.transaction_state_log_min_isr)}
    try:
        placed = cluster.place(
            settings.transaction_state_log_num_partitions, settings.transaction_state_log_replication_factor
        )
        await cluster.create_topic(TXN_STATE_TOPIC, placed, config)
    except (TopicExistsError, PlacementError) as exc:  # made meanwhile, or too few brokers yet
        log.info("creating %s: %s", TXN_STATE_TOPIC, exc)


async def auto_create(cluster: ClusterNode, topic: str, count: int) -> None:
    """Write a topic with the broker's defaults; a race with another creator is no error."""
    from hmb.cluster.assignment import PlacementError
    from hmb.cluster.topics import TopicExistsError

    try:
        await cluster.create_topic(topic, cluster.place(count, cluster.config.default_replication_factor), {})
    except (TopicExistsError, PlacementError) as exc:
        log.info("auto-creating %s: %s", topic, exc)
