"""This broker as a member of a cluster: join, register, stand for controller, follow the view.

The broker's cluster life is one trio task, :meth:`ClusterNode.run`, a loop:

1. read the whole tree (:func:`~hmb.cluster.view.read_view`, watches set);
2. if nobody is controller, stand (:func:`~hmb.cluster.controller.try_elect`);
3. as controller, write what the view lacks (:func:`~hmb.cluster.controller.reconcile`)
   and read again;
4. publish the view to the request handlers, and make the local logs agree
   with it (open a topic's partitions when the topic appears, delete them
   when it is gone);
5. sleep until ZooKeeper says something changed (or a handler nudges).

Before the log is loaded, :meth:`ClusterNode.join` connects and settles the
cluster id: the first broker writes ``/cluster/id`` from its
``meta.properties`` (or a new id); every other broker adopts it, and one whose
``meta.properties`` names another cluster refuses to start, as Kafka does.
"""

from __future__ import annotations

import base64
import logging
import math
import time
from collections.abc import Callable, Sequence

import trio
from kazoo.client import KazooClient
from kazoo.exceptions import KazooException, NodeExistsError, NoNodeError
from kazoo.handlers.threading import KazooTimeoutError

from hmb.cluster import layout
from hmb.cluster.assignment import assign_replicas
from hmb.cluster.controller import (
    ElectionResults,
    Epoch,
    FencedError,
    elect,
    rebalance,
    reconcile,
    tool_election,
    try_elect,
)
from hmb.cluster.controller_inbox import ControllerInbox, PendingElection
from hmb.cluster.elections import Outcome
from hmb.cluster.errors import ClusterError
from hmb.cluster.layout import OFFSETS_TOPIC, BrokerRegistration, Endpoint, TopicAssignment
from hmb.cluster.session import ZkSession
from hmb.cluster.shutdown import AskController
from hmb.cluster.topics import add_partitions, mark_for_deletion, write_topic
from hmb.cluster.view import ClusterView, read_view
from hmb.config import BrokerConfig, ConfigError
from hmb.log import topic_ids
from hmb.log.manager import LogManager
from hmb.log.meta import new_cluster_id, recorded_cluster_id
from hmb.replication.roles import Replication

log = logging.getLogger(__name__)

#: what a ZooKeeper call raises when ZooKeeper cannot answer (kazoo's timeout is no KazooException)
ZK_ERRORS = (KazooException, KazooTimeoutError)
RETRY_S = 0.5  # after a failed step (ZooKeeper unreachable), the next try comes this much later


class ClusterNode:
    """The broker's cluster membership: its session, its registration, and the current view."""

    def __init__(self, config: BrokerConfig, logs: LogManager) -> None:
        assert config.zookeeper_connect is not None
        if config.node_id < 0:
            raise ConfigError("a broker in a cluster needs its own node.id (broker.id) of 0 or more")
        self.config = config
        self.broker_id = config.node_id
        self.logs = logs
        self.session = ZkSession(
            config.zookeeper_connect,
            session_timeout_ms=config.zookeeper_session_timeout_ms,
            connection_timeout_ms=config.zookeeper_connection_timeout_ms,
        )
        self.view = ClusterView()
        self.epoch: Epoch | None = None  # set while this broker is the controller
        self._updated = trio.Event()
        self._endpoints: tuple[Endpoint, ...] = ()
        self._failing = False  # the last step failed: try again without waiting for a watch
        #: topic settings changed through this broker, to be written to /config/topics
        self._config_changes: dict[str, dict[str, str]] = {}
        #: told (partition count, partitions led here) of __consumer_offsets after each view change:
        #: the group coordinator serves the groups of the partitions this broker leads
        self.offsets_led: Callable[[int, set[int]], None] | None = None
        #: told (partition count, {partition led here: leader epoch}) of __transaction_state after
        #: each view change: the transaction coordinator serves the ids of the partitions led here
        self.txn_led: Callable[[int, dict[int, int]], None] | None = None
        #: sends ControlledShutdown to the controller (hmb.interbroker); None: cannot ask
        self.ask_controller: AskController | None = None
        #: what ControlledShutdown and ElectLeaders ask of this broker while it is controller
        self.inbox = ControllerInbox(config)
        #: ``session.disconnects`` when the published view was read: it is trusted while they agree
        self._view_disconnects = -1
        #: the local replicas' roles (leader, follower), following each view
        self.replication = Replication(self)

    @property
    def zk(self) -> KazooClient:
        return self.session.client

    # ------------------------------------------------------------ joining

    async def join(self) -> str:
        """Connect, make Kafka's persistent paths, settle the cluster id (before the log loads)."""
        try:
            await self.session.start()
        except ZK_ERRORS as exc:
            raise ClusterError(
                f"cannot reach ZooKeeper at {self.config.zookeeper_connect} "
                f"(zookeeper.connection.timeout.ms={self.config.zookeeper_connection_timeout_ms}): {exc}"
            ) from None
        await self.session.run(self._ensure_paths)
        local = recorded_cluster_id(list(self.config.log_dirs))
        cluster_id = await self.session.run(self._adopt_cluster_id, local or new_cluster_id())
        if local is not None and local != cluster_id:
            raise ClusterError(
                f"the cluster id in ZooKeeper, {cluster_id}, does not match the one in meta.properties, "
                f"{local}: these log directories belong to another cluster"
            )
        self.logs.joined_cluster_id = cluster_id
        log.info(
            "joined cluster %s through ZooKeeper %s as broker %d",
            cluster_id,
            self.session.hosts,
            self.broker_id,
        )
        return cluster_id

    def _ensure_paths(self) -> None:
        for path in layout.PERSISTENT_PATHS:
            self.zk.ensure_path(path)

    def _adopt_cluster_id(self, proposed: str) -> str:
        try:
            self.zk.create(layout.CLUSTER_ID, layout.encode_cluster_id(proposed))
            return proposed
        except NodeExistsError:
            data, _ = self.zk.get(layout.CLUSTER_ID)
            return layout.decode_cluster_id(data)

    # ------------------------------------------------------------ registration

    def _register_blocking(self, deadline: float) -> None:
        """Create ``/brokers/ids/<id>``; wait out a previous session's node (a quick restart)."""
        path = layout.broker_path(self.broker_id)
        data = BrokerRegistration(self.broker_id, self._endpoints, self.config.broker_rack).encode()
        while True:
            try:
                self.zk.create(path, data, ephemeral=True)
                return
            except NodeExistsError:
                try:
                    _, stat = self.zk.get(path)
                except NoNodeError:
                    continue
                if stat.ephemeralOwner == self.zk.client_id[0]:
                    return  # ours already (registered before a reconnection)
                if time.monotonic() > deadline:
                    raise ClusterError(
                        f"broker id {self.broker_id} is registered by another live broker: "
                        "every broker of a cluster needs its own node.id"
                    ) from None
                gone = self.zk.exists(path) is None
                if not gone:
                    time.sleep(0.1)  # a worker thread, polling for the old session's expiry

    async def _register(self) -> None:
        # a killed broker's session lasts until ZooKeeper expires it: wait that long, and a bit
        wait_s = 2 * self.config.zookeeper_session_timeout_ms / 1000 + 5
        await self.session.run(self._register_blocking, time.monotonic() + wait_s)
        log.info("registered as broker %d at %s", self.broker_id, layout.broker_path(self.broker_id))

    # ------------------------------------------------------------ the loop

    async def run(
        self, endpoints: Sequence[Endpoint], *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """Register with ``endpoints`` (the bound, advertised addresses), then follow the cluster."""
        self._endpoints = tuple(endpoints)
        try:
            async with trio.open_nursery() as nursery:
                await nursery.start(self.replication.run)
                await self._loop(task_status)
        finally:
            with trio.CancelScope(shield=True):
                if self.config.controlled_shutdown_enable and self._endpoints:
                    from hmb.cluster.shutdown import controlled_shutdown

                    await controlled_shutdown(self, self.ask_controller)
                if self._endpoints:  # a clean stop: the high watermarks survive it
                    self.replication.write_checkpoint()  # blocking, but a few ms, and the last step
                await self.session.close()

    async def run_step(self) -> None:
        """One step of the loop, outside it: a stopping controller's own controlled shutdown."""
        await self._step()

    async def _loop(self, task_status: trio.TaskStatus[None]) -> None:
        # the cluster as it is, before registering: a broker restarted after kill -9 may wait
        # a session timeout for its old registration to expire, and answers meanwhile
        self.view = await self.session.run(read_view, self.zk, None)
        await self._register()
        await self._step()
        task_status.started()
        while True:
            wait_s = RETRY_S if self._failing else math.inf
            if self.epoch is not None:  # the controller wakes for its leader balance check
                wait_s = min(wait_s, self.inbox.seconds_to_rebalance())
            with trio.move_on_after(wait_s):
                await self.session.changed()
            try:
                await self._step()
            except ZK_ERRORS as exc:  # disconnected, or the session just expired
                log.warning("cluster: %s: %s; trying again", type(exc).__name__, exc)
                self._failing = True
            else:
                self._failing = False

    def topic_changed(self, topic: str, config: dict[str, str]) -> None:
        """AlterConfigs changed ``topic`` here: share it through ZooKeeper at the next step."""
        self._config_changes[topic] = config
        self.session.nudge()

    def _write_configs(self, changes: dict[str, dict[str, str]]) -> None:
        for topic, config in changes.items():
            try:
                self.zk.set(layout.topic_config_path(topic), layout.encode_topic_config(config))
            except NoNodeError:
                log.info("topic %s: settings not shared, the topic is gone", topic)

    async def _step(self) -> None:
        disconnects = self.session.disconnects  # before anything is read: a cut-off meanwhile shows
        if self._config_changes:
            changes, self._config_changes = self._config_changes, {}
            try:
                await self.session.run(self._write_configs, changes)
            except BaseException:
                self._config_changes = {**changes, **self._config_changes}  # tried again next step
                raise
        if self.session.lost:  # cleared only once registered again: a failed try is retried
            self.epoch = None
            await self._register()
            self.session.lost = False
        view = await self.session.run(read_view, self.zk, self.session.watch)
        if view.controller == -1:
            self.epoch = await self.session.run(try_elect, self.zk, self.broker_id)
            if self.epoch is not None:
                log.info("broker %d is the controller (epoch %d)", self.broker_id, self.epoch.epoch)
                self.inbox.took_office()
            view = await self.session.run(read_view, self.zk, self.session.watch)
        if view.controller != self.broker_id:
            self.epoch = None
        taken = self.inbox.take()
        results: list[ElectionResults] | None = None
        if self.epoch is not None:
            try:
                written, results = await self.session.run(self._control, view, taken)
                if written:
                    view = await self.session.run(read_view, self.zk, self.session.watch)
                self.inbox.steps += 1
            except FencedError as exc:
                log.warning("no longer the controller: %s", exc)
                self.epoch = None
            except BaseException:
                self.inbox.elections[:0] = taken  # tried again at the next step
                raise
        self.inbox.answer(taken, results if self.epoch is not None else None)
        previous, self.view = self.view, view
        if not self.session.lost:
            self._view_disconnects = disconnects
        await self._follow(previous, view)
        self._updated.set()
        self._updated = trio.Event()

    def _control(self, view: ClusterView, asked: list[PendingElection]) -> tuple[int, list[ElectionResults]]:
        """The controller's step (blocking): the decision table, then the elections asked for."""
        assert self.epoch is not None
        electorate = self.inbox.electorate(view)
        written = reconcile(self.zk, self.epoch, view, electorate)
        if written:
            view = read_view(self.zk, None)  # elections start from what reconcile wrote
        results = [elect(self.zk, self.epoch, view, e.election_type, e.partitions, electorate) for e in asked]
        written += tool_election(self.zk, self.epoch, view, electorate)
        written += sum(outcome is Outcome.ELECTED for r in results for outcome in r.values())
        if self.inbox.rebalance_due():
            written += rebalance(
                self.zk, self.epoch, view, self.config.leader_imbalance_per_broker_percentage, electorate
            )
        return written, results

    async def _follow(self, previous: ClusterView, view: ClusterView) -> None:
        """Make the local logs agree with the view: open new topics and partitions, delete gone topics."""
        for topic in sorted(set(previous.topics) - set(view.topics)):
            if topic in self.logs.topics and topic != OFFSETS_TOPIC:
                await self.logs.delete_topic(topic)
        for topic, config in sorted(view.configs.items()):
            # /config/topics/<t> differs from the local copy: changed through another broker, by a
            # tool (as kafka-configs --zookeeper wrote it), or while this broker was down
            if topic in self.logs.topics and self.logs.topic_configs.overrides(topic) != config:
                try:
                    self.logs.set_topic_overrides(topic, config)
                except ConfigError as exc:
                    log.error("topic %s: settings from ZooKeeper refused: %s", topic, exc)
        for topic, assignment in sorted(view.topics.items()):
            local = self.logs.topics.get(topic)
            if (
                local is not None
                and len(local) < len(assignment.partitions)
                and topic not in self.logs.growing
            ):
                try:  # CreatePartitions through another broker
                    await self.logs.add_partitions_async(topic, len(assignment.partitions))
                except OSError as exc:
                    log.error("cannot open the new partitions of topic %s here: %s", topic, exc)
            if local is not None or topic in self.logs.creating or topic in self.logs.deleting:
                continue
            if topic in view.deleting:
                continue
            raw = base64.urlsafe_b64decode(assignment.topic_id + "==") if assignment.topic_id else None
            try:
                await self.logs.create_topic_async(
                    topic, len(assignment.partitions), view.configs.get(topic) or None, topic_id=raw
                )
            except (OSError, ConfigError) as exc:  # this broker's copy only: the cluster goes on
                log.error("cannot open the partitions of topic %s here: %s", topic, exc)
        await self.replication.apply(view)
        led = view.led_by(self.broker_id)
        if led != previous.led_by(self.broker_id):
            log.info("broker %d leads %d partition(s): %s", self.broker_id, len(led), _summary(led))
        if view.controller != previous.controller:
            log.info("broker %d: the controller is broker %d", self.broker_id, view.controller)
        offsets = view.topics.get(OFFSETS_TOPIC)
        if self.offsets_led is not None and offsets is not None:
            self.offsets_led(len(offsets.partitions), {p for t, p in led if t == OFFSETS_TOPIC})
        txn_state = view.topics.get(layout.TXN_STATE_TOPIC)
        if self.txn_led is not None and txn_state is not None:
            epochs = {p: view.states[(t, p)].leader_epoch for t, p in led if t == layout.TXN_STATE_TOPIC}
            self.txn_led(len(txn_state.partitions), epochs)

    # ------------------------------------------------------------ for the request handlers

    async def elect(
        self, election_type: int, partitions: list[tuple[str, int]] | None, timeout_s: float
    ) -> ElectionResults | None:
        """ElectLeaders on the controller: the next step runs it. None: not (or no longer) controller;
        trio.TooSlowError: the step did not come within ``timeout_s``."""
        pending = PendingElection(election_type, partitions)
        self.inbox.elections.append(pending)
        self.session.nudge()
        with trio.fail_after(timeout_s):
            await pending.done.wait()
        return pending.results

    async def shut_down_broker(self, broker_id: int, timeout_s: float) -> list[tuple[str, int]] | None:
        """ControlledShutdown on the controller: move ``broker_id``'s leaderships away (the next
        step does), then the partitions it still leads that have other replicas (Kafka answers
        only those: a partition with one replica goes offline with its broker). None: not
        controller, or no step came within ``timeout_s``."""
        self.inbox.shutting_down.add(broker_id)
        seen = self.inbox.steps
        self.session.nudge()

        def acted(_view: ClusterView) -> bool:
            return self.inbox.steps > seen and broker_id in self.inbox.acted_for

        if not await self.wait_until(acted, timeout_s) or self.epoch is None:
            return None
        return [
            (t, p)
            for t, p in self.view.led_by(broker_id)
            if len(self.view.topics[t].partitions.get(p, ())) > 1
        ]

    async def reserve_producer_ids(self, floor: int, size: int) -> tuple[int, int]:
        """A block of ``size`` producer ids no other broker has, none below ``floor``."""
        from hmb.cluster.producer_ids import reserve

        try:
            return await self.session.run(reserve, self.zk, self.broker_id, floor, size)
        except ZK_ERRORS as exc:  # no block without ZooKeeper: the request is answered retriable
            raise OSError(f"cannot reserve producer ids in ZooKeeper: {exc}") from None

    def leads(self, topic: str, partition: int) -> bool:
        """Whether this broker may serve ``partition`` as its leader now.

        Only while the view that names it leader was read after the last
        disconnection from ZooKeeper: a broker cut off from ZooKeeper cannot
        know whether its session expired and another broker was elected, so
        it answers NOT_LEADER_OR_FOLLOWER (no acks=1 or acks=all write taken)
        until it is connected (registered again, if the session was lost) and
        has read a view that makes it leader again."""
        return self.view_trusted() and self.view.leader(topic, partition) == self.broker_id

    def view_trusted(self) -> bool:
        """Whether the view was read after the last disconnection from ZooKeeper."""
        return self._view_disconnects == self.session.disconnects and not self.session.lost

    async def wait_until(self, ready: Callable[[ClusterView], bool], timeout_s: float) -> bool:
        """Wait (bounded) until ``ready(view)`` is true; whether it became true."""
        with trio.move_on_after(timeout_s):
            while not ready(self.view):
                await self._updated.wait()
            return True
        return bool(ready(self.view))

    async def create_topic(
        self, topic: str, partitions: dict[int, tuple[int, ...]], config: dict[str, str]
    ) -> None:
        """Write the topic's znodes and wake the loop (TopicExistsError: it exists already)."""
        await self.session.run(
            write_topic, self.zk, topic, TopicAssignment(partitions, _new_id_text()), config
        )
        self.session.nudge()

    async def add_partitions(self, topic: str, count: int, new: dict[int, tuple[int, ...]]) -> None:
        """Grow ``topic`` from ``count`` partitions by ``new`` (TopicChangedError: it changed)."""
        await self.session.run(add_partitions, self.zk, topic, count, new)
        self.session.nudge()

    async def delete_topic(self, topic: str) -> None:
        await self.session.run(mark_for_deletion, self.zk, topic)
        self.session.nudge()

    def place(self, partitions: int, replication_factor: int) -> dict[int, tuple[int, ...]]:
        """Kafka's placement over the live brokers (PlacementError when there are too few)."""
        return assign_replicas(
            {b: r.rack for b, r in self.view.brokers.items()}, partitions, replication_factor
        )


def _new_id_text() -> str:
    return topic_ids.as_text(topic_ids.new_topic_id())


def _summary(partitions: list[tuple[str, int]]) -> str:
    return ", ".join(f"{t}-{p}" for t, p in partitions[:20]) + (" ..." if len(partitions) > 20 else "")
