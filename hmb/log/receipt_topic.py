"""rAck receipts of a broker alone: records of the internal topic ``__rack_receipts``.

Without ZooKeeper there is no tree to watch, so a broker alone keeps the
receipts where any Kafka client can follow them: one partition of an internal
topic, one record per received rAck record, key = the origin (the producer's
client id) and value = ``origin;destination;id``, the text a cluster puts in its
receipt znodes.  A monitor reads it with an ordinary Fetch from the end it saw
at start.  ``retention.ms`` is ``rack.receipts.ttl.ms``: the znodes' TTL
becomes the topic's age limit.
"""

from __future__ import annotations

from collections.abc import Iterable

from hmb.log.manager import LogManager
from hmb.log.partition import PartitionLog
from kproto.records import RecordBatchBuilder

TOPIC = "__rack_receipts"


class TopicReceipts:
    """Appends receipt lines to ``__rack_receipts`` partition 0 (made at the first use)."""

    def __init__(self, logs: LogManager, ttl_ms: int) -> None:
        self.logs = logs
        self.ttl_ms = ttl_ms
        self._plog: PartitionLog | None = None

    async def _partition(self) -> PartitionLog:
        if self._plog is not None:
            return self._plog
        ttl = {"retention.ms": str(self.ttl_ms)}
        plog = self.logs.get(TOPIC, 0)
        if plog is None:
            plog = (await self.logs.create_topic_async(TOPIC, 1, ttl))[0]
        elif self.logs.topic_configs.overrides(TOPIC).get("retention.ms") != ttl["retention.ms"]:
            # made by a monitor's Metadata before the first receipt, or under another TTL
            self.logs.set_topic_overrides(TOPIC, {**self.logs.topic_configs.overrides(TOPIC), **ttl})
        self._plog = plog
        return plog

    async def write(self, origin: str, lines: Iterable[str], timestamp_ms: int) -> int:
        """Append one batch holding a record per line; how many were written."""
        builder = RecordBatchBuilder()
        key = origin.encode()
        count = 0
        for line in lines:
            builder.append(key, line.encode(), timestamp_ms)
            count += 1
        if count:
            plog = await self._partition()
            await plog.append(builder.build())
        return count
