"""What every broker knows of the cluster: one immutable snapshot of the ZooKeeper tree.

Rules:

* :func:`read_view` reads the whole tree the cluster uses in one go (in a
  worker thread) and sets a watch on every part of it, so the next change
  anywhere wakes the broker to read again.  Handlers never touch ZooKeeper:
  they read :class:`ClusterView`, replaced whole after each read, so one
  request sees one consistent picture.
* The view knows facts, not decisions: who is alive, who is controller,
  each topic's assignment and each partition's state.  The controller
  (hmb.cluster.controller) decides; the broker (hmb.cluster.node) acts on the
  partitions the view says it leads.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from hmb.cluster import layout
from hmb.cluster.layout import BrokerRegistration, PartitionState, TopicAssignment

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ClusterView:
    brokers: Mapping[int, BrokerRegistration] = field(default_factory=dict)
    controller: int = -1
    controller_epoch: int = 0
    topics: Mapping[str, TopicAssignment] = field(default_factory=dict)
    #: (topic, partition) -> state; a partition without one has not been given a leader yet
    states: Mapping[tuple[str, int], PartitionState] = field(default_factory=dict)
    configs: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    deleting: frozenset[str] = frozenset()
    #: partitions a tool asked preferred leaders for (/admin/preferred_replica_election); None: none
    preferred_election: tuple[tuple[str, int], ...] | None = None

    def leader(self, topic: str, partition: int) -> int:
        state = self.states.get((topic, partition))
        return layout.NO_LEADER if state is None else state.leader

    def led_by(self, broker_id: int) -> list[tuple[str, int]]:
        return sorted(k for k, s in self.states.items() if s.leader == broker_id)

    def ready(self, topic: str) -> bool:
        """Every partition of ``topic`` has a state znode (the controller has placed it)."""
        assignment = self.topics.get(topic)
        return assignment is not None and all((topic, p) in self.states for p in assignment.partitions)


def _children(zk: KazooClient, path: str, watch: Callable[..., Any] | None) -> list[str]:
    try:
        return list(zk.get_children(path, watch=watch))
    except NoNodeError:
        return []


def _data(zk: KazooClient, path: str, watch: Callable[..., Any] | None) -> tuple[bytes, int] | None:
    try:
        data, stat = zk.get(path, watch=watch)
    except NoNodeError:
        if watch is not None:
            zk.exists(path, watch=watch)  # wake when it appears
        return None
    return data, stat.version


def read_view(zk: KazooClient, watch: Callable[..., Any] | None) -> ClusterView:
    """The whole cluster as ZooKeeper has it now, watches set on every part (blocking)."""
    brokers: dict[int, BrokerRegistration] = {}
    for child in _children(zk, layout.BROKER_IDS, watch):
        got = _data(zk, layout.broker_path(int(child)), None)
        if got is not None:
            brokers[int(child)] = BrokerRegistration.decode(int(child), got[0])
    got = _data(zk, layout.CONTROLLER, watch)
    controller = layout.decode_controller(got[0]) if got else -1
    got = _data(zk, layout.CONTROLLER_EPOCH, None)
    epoch = layout.decode_epoch(got[0]) if got else 0
    topics: dict[str, TopicAssignment] = {}
    states: dict[tuple[str, int], PartitionState] = {}
    configs: dict[str, dict[str, str]] = {}
    for topic in _children(zk, layout.BROKER_TOPICS, watch):
        got = _data(zk, layout.topic_path(topic), watch)
        if got is None:
            continue
        assignment = TopicAssignment.decode(got[0])
        topics[topic] = assignment
        _children(zk, layout.partitions_path(topic), watch)
        for p in assignment.partitions:
            got = _data(zk, layout.state_path(topic, p), watch)
            if got is not None:
                states[(topic, p)] = PartitionState.decode(got[0], got[1])
        got = _data(zk, layout.topic_config_path(topic), watch)
        if got is not None:
            configs[topic] = layout.decode_topic_config(got[0])
    deleting = frozenset(_children(zk, layout.DELETE_TOPICS, watch))
    got = _data(zk, layout.PREFERRED_ELECTION, watch)
    preferred = None
    if got is not None:
        try:
            preferred = tuple(layout.decode_preferred_election(got[0]))
        except (ValueError, KeyError, TypeError) as exc:  # a tool's bad JSON: acted on as empty
            log.warning("%s is not readable: %s", layout.PREFERRED_ELECTION, exc)
            preferred = ()
    return ClusterView(brokers, controller, epoch, topics, states, configs, deleting, preferred)
