"""rAck, the fourth acknowledgement level: Produce with acks = -2.

Rules:

* A rAck Produce is answered as acks = 0 is: never (a refused partition closes
  the connection, the producer's only sign).  The producer does not wait; its
  monitor keeps a backup of every record and learns from the receipts which
  ones arrived, resending the others with acks = -1.
* A receipt is ``origin;destination;id``: the request's client id (who sent
  it), the topic, and the record's rAck id, the value of its ``rack.id``
  header, else its key (a producer that sends the id as the key, as the
  design's first producer did), else empty.  A monitor matches receipts to its
  backups by origin and id.
* Receipts are taken from the records before they are appended, as the design
  says, but published only once the append succeeded: a receipt never confirms
  a record the log refused (the monitor resends those).
* Where receipts go: in a cluster, TTL sequential znodes under the topic's
  znode (:mod:`hmb.cluster.receipts`, written off the request path); alone,
  records of the internal topic ``__rack_receipts`` (:mod:`hmb.log.receipt_topic`).
  The writer is made at the first rAck Produce, so a broker that never sees
  one pays nothing.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from hmb.api.context import RequestContext
from kproto import KprotoError
from kproto.records import read_records

if TYPE_CHECKING:
    from hmb.cluster.receipts import ZkReceipts
    from hmb.log.receipt_topic import TopicReceipts

log = logging.getLogger(__name__)

#: The acks value of a rAck Produce.
RACK_ACKS = -2
#: The record header holding a record's rAck id.
ID_HEADER = "rack.id"


def _text(raw: bytes | None) -> str:
    return "" if raw is None else raw.decode("utf-8", "replace")


def receipt_lines(origin: str, topic: str, records: bytes | bytearray) -> list[str]:
    """``origin;destination;id`` for every record of one partition's record set."""
    try:
        decoded = read_records(records)
    except (KprotoError, ValueError) as exc:
        log.debug("rAck records of %s not readable for receipts: %s", topic, exc)
        return []  # the append refuses them too, and with its own error
    lines = []
    for record in decoded:
        rid = next((v for k, v in record.headers if k == ID_HEADER), None)
        lines.append(f"{origin};{topic};{_text(rid if rid is not None else record.key)}")
    return lines


class RackReceipts:
    """Where this broker's receipts go: ZooKeeper in a cluster, ``__rack_receipts`` alone."""

    def __init__(self, ctx: RequestContext) -> None:
        services = ctx.services
        ttl = services.config.rack_receipts_ttl_ms
        self.zk: ZkReceipts | None = None
        self.topic: TopicReceipts | None = None
        if services.cluster is not None:
            from hmb.cluster.receipts import ZkReceipts

            self.zk = ZkReceipts(services.cluster.zk, ttl)
        else:
            from hmb.log.receipt_topic import TopicReceipts

            self.topic = TopicReceipts(services.logs, ttl)
        self._wall_ms = services.clock.wall_ms

    async def publish(self, origin: str, topic: str, lines: list[str]) -> None:
        if not lines:
            return
        if self.zk is not None:
            self.zk.write(topic, lines)
            await self.zk.backpressure()
        elif self.topic is not None:
            await self.topic.write(origin, lines, self._wall_ms())


def receipts(ctx: RequestContext) -> RackReceipts:
    """The broker's receipt writer, made at its first rAck Produce."""
    services = ctx.services
    if services.rack_receipts is None:
        services.rack_receipts = RackReceipts(ctx)
    writer: RackReceipts = services.rack_receipts
    return writer
