"""The transaction coordinator's WriteTxnMarkers to the leaders of a transaction's partitions.

Rules:

* One WriteTxnMarkers (v1) per leader, to every leader at once, this broker
  included (its own partitions take the same path: the handler appends as
  leader and waits for the in-sync replicas, as for any other leader).
* A partition is marked when its leader answers NONE.  It needs no marker
  when the leader answers UNKNOWN_TOPIC_OR_PARTITION (the topic was deleted)
  or INVALID_PRODUCER_EPOCH (a newer epoch already wrote there), as when the
  coordinator writes its own log alone.  Any other answer
  (NOT_LEADER_OR_FOLLOWER after a leader change, NOT_ENOUGH_REPLICAS), no
  leader, or no answer at all leaves the partition for the next try, which
  reads the leader from the view again.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import trio

from hmb.interbroker.peer import PeerError, ask, by_topic, plain_listener
from kproto import ApiKey, ErrorCode

if TYPE_CHECKING:
    from hmb.cluster.node import ClusterNode

log = logging.getLogger(__name__)

VERSION = 1
REQUEST_TIMEOUT_S = 30.0  # Kafka's request.timeout.ms for the coordinator's marker channel
#: answers after which a partition needs no marker (or no longer can have one)
SETTLED = frozenset({ErrorCode.NONE, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.INVALID_PRODUCER_EPOCH})

TP = tuple[str, int]


def _body(pid: int, epoch: int, commit: bool, coordinator_epoch: int, tps: list[TP]) -> dict[str, Any]:
    marker = {
        "producer_id": pid,
        "producer_epoch": epoch,
        "transaction_result": commit,
        "topics": [{"name": t, "partition_indexes": ps} for t, ps in by_topic(tps)],
        "coordinator_epoch": coordinator_epoch,
    }
    return {"markers": [marker]}


async def send_markers(
    node: ClusterNode, producer_id: int, epoch: int, commit: bool, coordinator_epoch: int, tps: list[TP]
) -> list[TP]:
    """Ask each leader of ``tps`` to write the marker; the partitions still without one."""
    view = node.view
    by_leader: dict[int, list[TP]] = {}
    left: list[TP] = []
    for tp in tps:
        leader = view.leader(*tp)
        if leader in view.brokers:
            by_leader.setdefault(leader, []).append(tp)
        else:
            left.append(tp)

    async def one(leader: int, mine: list[TP]) -> None:
        registration = view.brokers[leader]
        listener = plain_listener(registration)
        body = _body(producer_id, epoch, commit, coordinator_epoch, mine)
        try:
            answer = await ask(
                registration, listener, ApiKey.WRITE_TXN_MARKERS, VERSION, body, REQUEST_TIMEOUT_S
            )
        except PeerError as exc:
            log.warning("markers of producer %d to broker %d: %s", producer_id, leader, exc)
            left.extend(mine)
            return
        answered: set[TP] = set()
        for marker in answer.markers:
            for topic in marker.topics:
                for p in topic.partitions:
                    if p.error_code in SETTLED:
                        answered.add((topic.name, p.partition_index))
                    else:
                        log.info(
                            "marker of producer %d on %s-%d: broker %d answered %s",
                            producer_id,
                            topic.name,
                            p.partition_index,
                            leader,
                            ErrorCode(p.error_code).name,
                        )
        left.extend(tp for tp in mine if tp not in answered)

    async with trio.open_nursery() as nursery:
        for leader, mine in sorted(by_leader.items()):
            nursery.start_soon(one, leader, mine)
    return sorted(left)
