"""A partition leader asks a transactional id's coordinator to add a partition to its transaction.

Rules:

* Sent for a transactional batch of Produce v12+ (transaction version 2,
  where the client adds no partition itself) when another broker
  coordinates the id: the coordinator is the leader of the id's
  ``__transaction_state`` partition in this broker's view.
* AddPartitionsToTxn v4, the brokers' form, with ``verify_only`` false: the
  coordinator adds the partition (starting the transaction if none is open)
  with the same checks as a client's request.
* The answer is the first partition's error code that is not NONE (NONE
  when every partition was added); no coordinator in the view, no answer or
  a top-level refusal is COORDINATOR_NOT_AVAILABLE.  The caller turns codes
  into Produce's.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from hmb.interbroker.peer import PeerError, ask, by_topic, plain_listener
from kproto import ApiKey, ErrorCode

if TYPE_CHECKING:
    from hmb.cluster.node import ClusterNode

log = logging.getLogger(__name__)

VERSION = 4
REQUEST_TIMEOUT_S = 30.0  # Kafka's request.timeout.ms
STATE_TOPIC = "__transaction_state"

TP = tuple[str, int]


def _body(tid: str, producer_id: int, epoch: int, tps: list[TP]) -> dict[str, Any]:
    txn = {
        "transactional_id": tid,
        "producer_id": producer_id,
        "producer_epoch": epoch,
        "verify_only": False,
        "topics": [{"name": t, "partitions": ps} for t, ps in by_topic(tps)],
    }
    return {"transactions": [txn]}


async def add_at_coordinator(
    node: ClusterNode,
    partition_of: Callable[[str], int],
    tid: str,
    producer_id: int,
    epoch: int,
    tps: list[TP],
) -> int:
    """Ask ``tid``'s coordinator to add ``tps`` to its transaction; the code of the answer."""
    view = node.view
    coordinator = view.leader(STATE_TOPIC, partition_of(tid))
    registration = view.brokers.get(coordinator)
    if registration is None:
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    body = _body(tid, producer_id, epoch, tps)
    try:
        answer = await ask(
            registration,
            plain_listener(registration),
            ApiKey.ADD_PARTITIONS_TO_TXN,
            VERSION,
            body,
            REQUEST_TIMEOUT_S,
        )
    except PeerError as exc:
        log.warning("adding %s to the transaction of %s at broker %d: %s", tps, tid, coordinator, exc)
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    if answer.error_code:
        log.warning(
            "broker %d refused to add partitions for %s: %s",
            coordinator,
            tid,
            ErrorCode(answer.error_code).name,
        )
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    codes = [
        p.partition_error_code
        for txn in answer.results_by_transaction
        for topic in txn.topic_results
        for p in topic.results_by_partition
    ]
    if not codes:
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    return next((c for c in codes if c), ErrorCode.NONE)
