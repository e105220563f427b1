"""rAck receipts in ZooKeeper: one TTL sequential znode per record received with acks = -2.

Rules:

* A receipt is ``/brokers/topics/<topic>/produce - <sequence>`` holding
  ``origin;destination;id`` (the producer's client id, the topic, the record's
  rAck id), a persistent sequential znode with a TTL (``rack.receipts.ttl.ms``,
  600 s by default): ZooKeeper removes it once it is older than that and has no
  children.  ZooKeeper refuses TTL znodes unless its server runs with
  ``zookeeper.extendedTypesEnabled=true``.
* kazoo has no call for TTL znodes, so :class:`CreateTTL` is ZooKeeper's
  ``createTTL`` request (opcode 21) in kazoo's request form, queued on kazoo's
  connection like its own calls.
* Writing never blocks the request path: :meth:`ZkReceipts.write` queues the
  creates and returns; kazoo's connection thread pipelines them.  Only when more
  than ``MAX_IN_FLIGHT`` are unanswered does the Produce wait (in a worker
  thread) for the oldest ones: back-pressure, so that a slow ZooKeeper slows the
  rAck producers instead of filling the broker's memory.
* A receipt that fails (ZooKeeper unreachable, TTL znodes disabled) is logged
  and dropped: the monitor then resends the record, which is a duplicate at
  worst, never a loss.
"""

from __future__ import annotations

import logging
import struct
from collections import deque
from collections.abc import Iterable
from typing import Any

import trio
from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError, NotEmptyError
from kazoo.protocol.serialization import int_struct, read_string, write_buffer, write_string
from kazoo.security import OPEN_ACL_UNSAFE

from hmb.cluster import layout

log = logging.getLogger(__name__)

#: ZooKeeper's CreateMode.PERSISTENT_SEQUENTIAL_WITH_TTL
PERSISTENT_SEQUENTIAL_WITH_TTL = 6
#: unanswered creates beyond which a rAck Produce waits for ZooKeeper
MAX_IN_FLIGHT = 20_000
_I64 = struct.Struct(">q")


class CreateTTL:
    """ZooKeeper's CreateTTLRequest: path, data, ACL, flags, TTL in ms (answered as Create2)."""

    type = 21  # OpCode.createTTL

    __slots__ = ("acl", "data", "flags", "path", "ttl")

    def __init__(self, path: str, data: bytes, acl: Any, flags: int, ttl: int) -> None:
        self.path, self.data, self.acl, self.flags, self.ttl = path, data, acl, flags, ttl

    def serialize(self) -> bytearray:
        b = bytearray()
        b.extend(write_string(self.path))
        b.extend(write_buffer(self.data))
        b.extend(int_struct.pack(len(self.acl)))
        for acl in self.acl:
            b.extend(int_struct.pack(acl.perms) + write_string(acl.id.scheme) + write_string(acl.id.id))
        b.extend(int_struct.pack(self.flags))
        b.extend(_I64.pack(self.ttl))
        return b

    @classmethod
    def deserialize(cls, data: bytes, offset: int) -> str:
        return str(read_string(data, offset)[0])  # the znode's path, sequence number included


class ZkReceipts:
    """Writes the receipts of one broker through its kazoo client."""

    def __init__(self, zk: KazooClient, ttl_ms: int) -> None:
        self.zk = zk
        self.ttl_ms = ttl_ms
        self._pending: deque[Any] = deque()  # kazoo async results, oldest first
        self.failed = 0  # receipts ZooKeeper refused: the first and every 1000th are logged

    def write(self, topic: str, lines: Iterable[str]) -> None:
        """Queue one create per receipt line (non-blocking)."""
        path = self.zk.chroot + layout.receipt_prefix(topic)  # kazoo's own calls add the chroot
        for line in lines:
            result = self.zk.handler.async_result()
            result.rawlink(self._done)
            self.zk._call(  # kazoo's own queue: there is no public call for createTTL
                CreateTTL(path, line.encode(), OPEN_ACL_UNSAFE, PERSISTENT_SEQUENTIAL_WITH_TTL, self.ttl_ms),
                result,
            )
            self._pending.append(result)

    def _done(self, result: Any) -> None:
        """kazoo's thread: log a failure (the monitor will resend the record)."""
        if result.successful():
            return
        self.failed += 1
        if self.failed == 1 or self.failed % 1000 == 0:
            log.warning("rAck receipt not written (%d so far): %r", self.failed, result.exception)

    async def backpressure(self) -> None:
        """Wait (off the event loop) while more than MAX_IN_FLIGHT creates are unanswered."""
        pending = self._pending
        while pending and pending[0].ready():
            pending.popleft()
        while len(pending) > MAX_IN_FLIGHT:
            oldest = pending.popleft()
            await trio.to_thread.run_sync(oldest.wait, 30.0)


def delete_receipts(zk: KazooClient, topic: str) -> int:
    """Remove the receipts under a topic being deleted (blocking); how many went."""
    removed = 0
    try:
        children = zk.get_children(layout.topic_path(topic))
    except NoNodeError:
        return 0
    for child in children:
        if child.startswith(layout.RECEIPT_NAME):
            try:
                zk.delete(f"{layout.topic_path(topic)}/{child}")
                removed += 1
            except (NoNodeError, NotEmptyError):
                pass
    return removed
