"""Controlled shutdown: a broker stopping cleanly first hands its leaderships over.

Kafka's ZooKeeper-mode procedure, run by :meth:`ClusterNode.run` as it
stops (SIGTERM, the embedded broker's stop) while its registration still
stands:

1. ask the controller, with ControlledShutdown (this broker's id; the
   request itself is :mod:`hmb.interbroker`'s, wired in by the broker), to move
   the leadership of every partition it leads to another live in-sync
   replica (leader epoch + 1) and to take it out of the ISRs it is in;
   a broker that is the controller itself runs that step in place;
2. the answer lists the partitions it still leads that have other
   replicas (none of them in sync and alive): while any remain, or the
   controller could not be reached, ask again after
   ``controlled.shutdown.retry.backoff.ms``, at most
   ``controlled.shutdown.max.retries`` times;
3. then, whatever the outcome, deregister (the session closes): a partition
   with one replica goes offline now, as in Kafka, and the controller's
   failover rules take over for whatever is left.

The broker's listeners are already closed when this runs: clients meet
NOT_LEADER_OR_FOLLOWER or a refused connection, find the new leaders in
Metadata, and go on.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import trio
from kazoo.client import KazooClient

from hmb.cluster import layout
from hmb.cluster.layout import BrokerRegistration
from hmb.cluster.view import ClusterView, read_view

if TYPE_CHECKING:
    from hmb.cluster.node import ClusterNode

log = logging.getLogger(__name__)


def _registered_by(zk: KazooClient, broker_id: int) -> bool:
    """Whether ``/brokers/ids/<id>`` is this session's own (not a namesake's)."""
    stat = zk.exists(layout.broker_path(broker_id))
    return stat is not None and stat.ephemeralOwner == zk.client_id[0]


#: (the controller's registration, the listener to use, this broker's id) -> the partitions
#: this broker still leads, or why the controller gave no answer (hmb.interbroker)
AskController = Callable[[BrokerRegistration, str, int], Awaitable[list[tuple[str, int]] | str]]


async def _attempt(
    node: ClusterNode, view: ClusterView, ask: AskController | None
) -> list[tuple[str, int]] | str:
    """One try: the partitions still led, or why the controller gave no answer."""
    if view.controller == node.broker_id and node.epoch is not None:
        node.inbox.shutting_down.add(node.broker_id)
        await node.run_step()
        led = node.view.led_by(node.broker_id)
        return [(t, p) for t, p in led if len(node.view.topics[t].partitions[p]) > 1]
    controller = view.brokers.get(view.controller)
    if controller is None:
        return "no controller"
    if ask is None:
        return "no way to reach the controller"
    return await ask(controller, view.brokers[node.broker_id].endpoints[0].listener, node.broker_id)


async def controlled_shutdown(node: ClusterNode, ask: AskController | None) -> None:
    """Hand this broker's leaderships over before it deregisters (bounded by the retries)."""
    config = node.config
    started = time.monotonic()
    attempts = config.controlled_shutdown_max_retries + 1
    for attempt in range(1, attempts + 1):
        if not node.zk.connected:  # a call would wait for ZooKeeper: nobody could move anything
            log.warning("controlled shutdown skipped: not connected to ZooKeeper")
            return
        try:
            if not await node.session.run(_registered_by, node.zk, node.broker_id):
                return  # not registered (never was, or the session is gone): nothing to hand over
            view = await node.session.run(read_view, node.zk, None)
        except Exception as exc:  # ZooKeeper unreachable: nobody could move anything
            log.warning("controlled shutdown skipped: ZooKeeper cannot be read: %s", exc)
            return
        outcome = await _attempt(node, view, ask)
        if outcome == []:
            log.info(
                "controlled shutdown of broker %d done in %.2f s: it leads no partition another "
                "replica could lead",
                node.broker_id,
                time.monotonic() - started,
            )
            return
        why = outcome if isinstance(outcome, str) else f"still leads {len(outcome)} partition(s)"
        log.warning("controlled shutdown attempt %d of %d: %s", attempt, attempts, why)
        if attempt < attempts:
            await trio.sleep(config.controlled_shutdown_retry_backoff_ms / 1000)
    log.warning("controlled shutdown did not complete: stopping anyway")
