"""Producer-id blocks from ZooKeeper, so that no two brokers of a cluster hand out the same id.

Rules (Kafka's ZooKeeper mode):

* ``/latest_producer_id_block`` holds the last block any broker reserved:
  ``{"version":1,"broker":<id>,"block_start":"<first>","block_end":"<last>"}``
  (the numbers as strings, as Kafka writes them).
* A broker reserves the next block by a conditional set on the version it
  read: two brokers racing both read version v, one set succeeds, the other
  gets BadVersion and reads again.  A missing znode is made with the first
  block (NodeExists: another broker made it first, read again).
* The block never starts below the broker's own floor (one past the largest
  producer id in its logs, or its last block): ids found on disk stay unique.

The calls block (kazoo): :meth:`hmb.cluster.node.ClusterNode.reserve_producer_ids` runs them
in a worker thread.
"""

from __future__ import annotations

import json

from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError

PATH = "/latest_producer_id_block"
VERSION = 1


def encode(broker_id: int, start: int, end: int) -> bytes:
    doc = {"version": VERSION, "broker": broker_id, "block_start": str(start), "block_end": str(end)}
    return json.dumps(doc, separators=(",", ":")).encode()


def decode_end(data: bytes) -> int:
    """The last id of the block a znode's data describes (-1 for an empty znode)."""
    if not data:
        return -1
    return int(json.loads(data)["block_end"])


def reserve(zk: KazooClient, broker_id: int, floor: int, size: int) -> tuple[int, int]:
    """Reserve the next block of ``size`` ids (none below ``floor``) for ``broker_id``."""
    while True:
        try:
            data, stat = zk.get(PATH)
        except NoNodeError:
            start = max(floor, 0)
            try:
                zk.create(PATH, encode(broker_id, start, start + size - 1), makepath=True)
            except NodeExistsError:
                continue
            return start, start + size - 1
        start = max(decode_end(data) + 1, floor)
        try:
            zk.set(PATH, encode(broker_id, start, start + size - 1), version=stat.version)
        except BadVersionError:
            continue  # another broker reserved a block meanwhile: read again
        return start, start + size - 1
