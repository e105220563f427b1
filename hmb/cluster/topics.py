"""Topic admin in a cluster: what the broker that receives CreateTopics or DeleteTopics writes.

As in Kafka's ZooKeeper mode, any broker may take the request: it writes the
topic's settings (``/config/topics/<t>``) and then its replica assignment
(``/brokers/topics/<t>``), and the controller reacts to the new assignment
by electing each partition's leader.  CreatePartitions rewrites the
assignment with the new partitions added (a conditional set), and the
controller places them the same way.  Deletion is a marker,
``/admin/delete_topics/<t>``, that the controller acts on.  The assignment
znode's creation is the point of no return: a topic exists when it does, and
a second request for the same name finds it there (TOPIC_ALREADY_EXISTS).
"""

from __future__ import annotations

from collections.abc import Mapping

from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError

from hmb.cluster import layout
from hmb.cluster.layout import TopicAssignment


class TopicExistsError(Exception):
    """The assignment znode is there already: another request created the topic."""


class TopicChangedError(Exception):
    """The topic was deleted or grown by another request since it was read."""


def write_topic(zk: KazooClient, topic: str, assignment: TopicAssignment, config: Mapping[str, str]) -> None:
    """Settings first, then the assignment, as Kafka's admin client wrote them (blocking)."""
    if zk.exists(layout.topic_path(topic)):
        raise TopicExistsError(topic)
    zk.ensure_path(layout.CONFIG_TOPICS)
    data = layout.encode_topic_config(config)
    try:
        zk.create(layout.topic_config_path(topic), data)
    except NodeExistsError:
        zk.set(layout.topic_config_path(topic), data)  # left by a creation that failed half-way
    try:
        zk.create(layout.topic_path(topic), assignment.encode())
    except NodeExistsError:
        raise TopicExistsError(topic) from None


def add_partitions(zk: KazooClient, topic: str, count: int, new: Mapping[int, tuple[int, ...]]) -> None:
    """Grow ``topic``'s assignment from ``count`` partitions with ``new`` ones (blocking).

    A conditional set: if the topic changed since ``count`` was read (another
    request grew it, or it was deleted), :class:`TopicChangedError` and nothing
    is written."""
    try:
        data, stat = zk.get(layout.topic_path(topic))
    except NoNodeError:
        raise TopicChangedError(f"topic {topic!r} does not exist") from None
    current = TopicAssignment.decode(data)
    if len(current.partitions) != count:
        raise TopicChangedError(f"topic {topic!r} has {len(current.partitions)} partition(s) now")
    grown = TopicAssignment({**current.partitions, **new}, current.topic_id)
    try:
        zk.set(layout.topic_path(topic), grown.encode(), version=stat.version)
    except (BadVersionError, NoNodeError):
        raise TopicChangedError(f"topic {topic!r} changed meanwhile") from None


def mark_for_deletion(zk: KazooClient, topic: str) -> None:
    """Ask the controller to delete ``topic`` (blocking; a second mark is the same mark)."""
    zk.ensure_path(layout.DELETE_TOPICS)
    try:
        zk.create(layout.delete_topic_path(topic), b"")
    except NodeExistsError:
        pass
