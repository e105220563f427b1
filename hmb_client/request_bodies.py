"""Request bodies that more than one client builds, built here once.

Rules of this module: each function returns the body dict of one API for
every version the client sends (``CLIENT_VERSIONS``); kproto's grammar drops
the fields a version lacks and fills nothing in, so every field of every
version is given here.  Values the client never varies (no replica id, no
leader epoch, no static membership) are written once, here.  The consumer
(positions, commits) and the admin (topic descriptions) both use them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from hmb_client.cluster import NO_TOPIC_ID
from hmb_client.structs import OffsetAndMetadata, TopicPartition

#: ListOffsets v2+ / Fetch v4+ ``isolation_level`` values, by the consumer setting's name.
ISOLATION = {"read_uncommitted": 0, "read_committed": 1}

_NO_REPLICA = -1  # a client, not a follower broker
_UNKNOWN_EPOCH = -1  # the client does not track leader epochs


def _by_topic(tps: Iterable[TopicPartition]) -> dict[str, list[TopicPartition]]:
    out: dict[str, list[TopicPartition]] = {}
    for tp in tps:
        out.setdefault(tp.topic, []).append(tp)
    return out


def list_offsets_body(
    timestamps: Mapping[TopicPartition, int], isolation_level: int = 0, timeout_ms: int = 30_000
) -> dict[str, Any]:
    """ListOffsets (v0-11): one offset per partition at its time in ms, or a special time
    (-1 latest, -2 earliest, -3 max timestamp, ...); ``timeout_ms`` (v10+) bounds the
    broker's wait on tiered storage."""
    return {
        "replica_id": _NO_REPLICA,
        "isolation_level": isolation_level,
        "timeout_ms": timeout_ms,
        "topics": [
            {
                "name": topic,
                "partitions": [
                    {
                        "partition_index": tp.partition,
                        "current_leader_epoch": _UNKNOWN_EPOCH,
                        "timestamp": timestamps[tp],
                        "max_num_offsets": 1,
                    }
                    for tp in tps
                ],
            }
            for topic, tps in _by_topic(timestamps).items()
        ],
    }


OFFSETS_BY_TOPIC_ID = 10
"""From this OffsetCommit and OffsetFetch version topics are named by id (KIP-516)."""


def offsets_version(version: int, topic_ids: Mapping[str, bytes] | None, topics: Iterable[str]) -> int:
    """``version`` of OffsetCommit/OffsetFetch, or v9 when v10+ would need a topic id
    ``topic_ids`` does not have (the client names topics by id only when it knows them all)."""
    if version < OFFSETS_BY_TOPIC_ID:
        return version
    if topic_ids is None or any(topic_ids.get(t, NO_TOPIC_ID) == NO_TOPIC_ID for t in topics):
        return OFFSETS_BY_TOPIC_ID - 1
    return version


def _topic_key(topic: str, topic_ids: Mapping[str, bytes] | None) -> dict[str, Any]:
    """A request topic's name, and its id when ``topic_ids`` are given (v10+)."""
    return {"name": topic} if topic_ids is None else {"name": topic, "topic_id": topic_ids[topic]}


def topic_name(t: Any, version: int, names_by_id: Mapping[bytes, str]) -> str:
    """An answer topic's name: given up to v9, looked up from its id from v10."""
    if version < OFFSETS_BY_TOPIC_ID:
        return str(t.name)
    return names_by_id.get(bytes(t.topic_id), "")


def offset_commit_body(
    group_id: str,
    offsets: Mapping[TopicPartition, OffsetAndMetadata],
    generation_id: int = -1,
    member_id: str = "",
    topic_ids: Mapping[str, bytes] | None = None,
) -> dict[str, Any]:
    """OffsetCommit (v1-10; v8 is flexible, v9 the same request, v10 names topics by the
    ids ``topic_ids`` give); generation -1 and no member id: not a group member
    (self-assigned partitions, as Kafka 0.8.2 consumers committed)."""
    return {
        "group_id": group_id,
        "generation_id": generation_id,
        "member_id": member_id,
        "group_instance_id": None,
        "retention_time_ms": -1,  # the broker's offsets.retention.minutes
        "topics": [
            {
                **_topic_key(topic, topic_ids),
                "partitions": [
                    {
                        "partition_index": tp.partition,
                        "committed_offset": offsets[tp].offset,
                        "committed_leader_epoch": _UNKNOWN_EPOCH,
                        "commit_timestamp": -1,
                        "committed_metadata": offsets[tp].metadata,
                    }
                    for tp in tps
                ],
            }
            for topic, tps in _by_topic(offsets).items()
        ],
    }


OFFSET_FETCH_BATCHED = 8
"""From this OffsetFetch version groups are asked for, and answered, in a ``groups`` batch."""


def offset_fetch_body(
    group_id: str,
    partitions: Iterable[TopicPartition] | None,
    version: int = 1,
    topic_ids: Mapping[str, bytes] | None = None,
) -> dict[str, Any]:
    """OffsetFetch (v1-10): the committed offsets of ``partitions`` in ``group_id``
    (None: every partition the group committed, v2+).  From v8 the one group is
    named in the ``groups`` batch, with no member id or epoch (a classic member);
    v10 names topics by the ids ``topic_ids`` give."""
    topics = None
    if partitions is not None:
        topics = [
            {**_topic_key(topic, topic_ids), "partition_indexes": [tp.partition for tp in tps]}
            for topic, tps in _by_topic(partitions).items()
        ]
    if version < OFFSET_FETCH_BATCHED:
        return {"group_id": group_id, "topics": topics, "require_stable": False}
    return {
        "groups": [{"group_id": group_id, "member_id": None, "member_epoch": -1, "topics": topics}],
        "require_stable": False,
    }


def offset_fetch_answer(response: Any, version: int) -> tuple[int, Any]:
    """(group error code, topics) of the one group an OffsetFetch answer is about
    (v0-1 carry no group error: NONE)."""
    if version >= OFFSET_FETCH_BATCHED:
        group = response.groups[0]
        return group.error_code, group.topics
    return (response.error_code if version >= 2 else 0), response.topics
