"""ListOffsets for the consumer: positions at the earliest/latest offset, and by time.

A mixin of :class:`hmb_client.fetcher._FetchLoop` (and so of the Consumer),
split out to keep the fetcher module a readable size.  ListOffsets v0 (Kafka
0.8) answers only the special times -1 (latest) and -2 (earliest), as a list
of offsets; v1+ answers one offset and its timestamp for any time, which is
what :meth:`OffsetLookups.offsets_for_times` needs; v2+ honour the
consumer's ``isolation_level`` (latest = last stable offset when
read_committed); v4+ carry a leader epoch, sent as -1 (unknown).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from hmb_client.cluster import Cluster
from hmb_client.connection import versions_from
from hmb_client.errors import IllegalStateError, error_for
from hmb_client.runtime import IoThread
from hmb_client.structs import OffsetAndTimestamp, TopicPartition
from kproto import ApiKey, ErrorCode

ISOLATION = {"read_uncommitted": 0, "read_committed": 1}
REFRESH_CODES = frozenset(
    {ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.LEADER_NOT_AVAILABLE}
)


class OffsetLookups:
    """ListOffsets requests; needs the consumer's config, cluster, I/O thread and retry helper."""

    config: Any  # hmb_client.fetcher.ConsumerConfig
    _cluster: Cluster
    _io: IoThread
    _closed: bool
    _retrying: Callable[..., Awaitable[Any]]

    async def _list_offsets(self, wanted: dict[TopicPartition, int]) -> dict[TopicPartition, int]:
        """The offsets at special times (-1 latest, -2 earliest) from each partition's leader."""
        return {tp: found[0] for tp, found in (await self._offsets_by_time(wanted)).items()}

    async def _offsets_by_time(
        self, wanted: dict[TopicPartition, int], *, exact: bool = False
    ) -> dict[TopicPartition, tuple[int, int]]:
        """ListOffsets: (offset, timestamp) per partition for a time in ms or -1/-2.

        v0 (Kafka 0.8) answers only the special times and no timestamps (-1);
        ``exact`` (a real timestamp) then raises UnsupportedVersionError, as
        kafka-python's ``offsets_for_times`` does.  v1+ may answer offset -1:
        no record at or after the time.
        """
        cfg = self.config
        timeout = cfg.request_timeout_ms / 1000
        by_leader: dict[int, dict[str, list[dict[str, int]]]] = {}
        for tp, ts in wanted.items():
            leader = await self._cluster.leader(tp.topic, tp.partition, timeout_s=timeout)
            by_leader.setdefault(leader, {}).setdefault(tp.topic, []).append(
                {
                    "partition_index": tp.partition,
                    "current_leader_epoch": -1,
                    "timestamp": ts,
                    "max_num_offsets": 1,
                }
            )
        out: dict[TopicPartition, tuple[int, int]] = {}
        for leader, topics in by_leader.items():
            conn = await self._cluster.connection(leader)
            version = conn.pick(ApiKey.LIST_OFFSETS, versions_from(1, ApiKey.LIST_OFFSETS) if exact else None)
            body = {
                "replica_id": -1,
                "isolation_level": ISOLATION[cfg.isolation_level],
                "topics": [{"name": t, "partitions": ps} for t, ps in topics.items()],
            }
            response = await conn.request(ApiKey.LIST_OFFSETS, version, body)
            for t in response.topics:
                for pr in t.partitions:
                    if pr.error_code:
                        if pr.error_code in REFRESH_CODES:
                            self._cluster.invalidate(t.name)
                        raise error_for(pr.error_code)(f"listing offsets of {t.name}-{pr.partition_index}")
                    tp = TopicPartition(t.name, pr.partition_index)
                    if version >= 1:
                        out[tp] = (pr.offset, pr.timestamp)
                    elif pr.old_style_offsets:
                        out[tp] = (pr.old_style_offsets[0], -1)
                    else:
                        raise error_for(ErrorCode.UNKNOWN_SERVER_ERROR)(
                            f"no offset listed for {t.name}-{pr.partition_index}"
                        )
        return out

    def offsets_for_times(
        self, timestamps: dict[TopicPartition, int]
    ) -> dict[TopicPartition, OffsetAndTimestamp | None]:
        """The earliest offset whose timestamp is >= the given one (ms), per partition.

        kafka-python's method: None for a partition without such a record;
        UnsupportedVersionError from a broker without ListOffsets v1 (Kafka
        0.10.1).  Caller-side (it blocks), kept next to the ListOffsets code.
        """
        if self._closed:
            raise IllegalStateError("the consumer is closed")
        for tp, ts in timestamps.items():
            if type(ts) is not int or ts < 0:
                raise ValueError(f"the timestamp of {tp} must be a non-negative int (ms), not {ts!r}")
        wanted = {TopicPartition(tp[0], tp[1]): ts for tp, ts in timestamps.items()}
        deadline = time.monotonic() + self.config.request_timeout_ms / 1000

        async def lookup(w: dict[TopicPartition, int]) -> dict[TopicPartition, tuple[int, int]]:
            return await self._offsets_by_time(w, exact=True)

        found = self._io.run(self._retrying, lookup, wanted, deadline)
        return {
            tp: OffsetAndTimestamp(found[tp][0], found[tp][1]) if tp in found and found[tp][0] >= 0 else None
            for tp in wanted
        }
