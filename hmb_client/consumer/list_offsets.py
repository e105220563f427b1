"""ListOffsets for the consumer: positions at the earliest/latest offset, and by time.

ListOffsets v0 (Kafka 0.8) answers only the special times -1 (latest) and
-2 (earliest), as a list of offsets; v1+ answers one offset and its
timestamp for any time, which is what ``Consumer.offsets_for_times`` needs;
v2+ honour the consumer's ``isolation_level`` (latest = last stable offset
when read_committed); v4+ carry a leader epoch, sent as -1 (unknown).
Everything here runs in the consumer's I/O thread.
"""

from __future__ import annotations

from hmb_client.cluster import Cluster
from hmb_client.connection import versions_from
from hmb_client.errors import error_for
from hmb_client.request_bodies import ISOLATION, list_offsets_body
from hmb_client.structs import TopicPartition
from kproto import ApiKey, ErrorCode

#: Partition errors after which the cached leader is wrong: metadata is refreshed.
REFRESH_CODES = frozenset(
    {
        ErrorCode.NOT_LEADER_OR_FOLLOWER,
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.LEADER_NOT_AVAILABLE,
        ErrorCode.UNKNOWN_TOPIC_ID,  # Fetch v13+: the topic was deleted (and maybe made again)
    }
)


class OffsetLookup:
    """Asks each partition's leader for offsets by time (ListOffsets)."""

    def __init__(self, cluster: Cluster, isolation_level: str, request_timeout_s: float) -> None:
        self._cluster = cluster
        self._isolation = ISOLATION[isolation_level]
        self._timeout_s = request_timeout_s

    async def offsets(self, wanted: dict[TopicPartition, int]) -> dict[TopicPartition, int]:
        """The offsets at special times (-1 latest, -2 earliest) from each partition's leader."""
        return {tp: found[0] for tp, found in (await self.at_times(wanted)).items()}

    async def at_times(
        self, wanted: dict[TopicPartition, int], *, exact: bool = False
    ) -> dict[TopicPartition, tuple[int, int]]:
        """ListOffsets: (offset, timestamp) per partition for a time in ms or -1/-2.

        v0 (Kafka 0.8) answers only the special times and no timestamps (-1);
        ``exact`` (a real timestamp) then raises UnsupportedVersionError, as
        kafka-python's ``offsets_for_times`` does.  v1+ may answer offset -1:
        no record at or after the time.
        """
        by_leader: dict[int, dict[TopicPartition, int]] = {}
        for tp, ts in wanted.items():
            leader = await self._cluster.leader(tp.topic, tp.partition, timeout_s=self._timeout_s)
            by_leader.setdefault(leader, {})[tp] = ts
        out: dict[TopicPartition, tuple[int, int]] = {}
        for leader, timestamps in by_leader.items():
            conn = await self._cluster.connection(leader)
            version = conn.pick(ApiKey.LIST_OFFSETS, versions_from(1, ApiKey.LIST_OFFSETS) if exact else None)
            body = list_offsets_body(timestamps, self._isolation)
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
