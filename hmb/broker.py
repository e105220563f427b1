"""The broker: the log, the groups, the committed offsets, the transactions and the listener.

The broker owns the services (:class:`hmb.api.context.Services`) and wires
them together: one dispatcher answers every connection's requests over
those services, and the listener hands it the frames.  Handlers see the
services, never this object.

``Broker.run`` is a trio task that reports the bound address through
``task_status`` once everything is loaded and listening; cancelling it stops
the listener and closes the log cleanly (flush, trim indexes, write the
clean-shutdown marker).
"""

from __future__ import annotations

import functools
import logging
import socket
from typing import Any

import trio

from hmb import __version__
from hmb.api.context import Services
from hmb.api.dispatch import Dispatcher
from hmb.clock import Clock
from hmb.config import BrokerConfig, Listener
from hmb.groups.coordinator import GroupCoordinator
from hmb.groups.offset_partitions import GroupOffsets, follow_leadership
from hmb.groups.offsets import TOPIC as OFFSETS_TOPIC
from hmb.groups.offsets import TOPIC_CONFIG as OFFSETS_TOPIC_CONFIG
from hmb.log.cleaner.cleaner import LogCleaner
from hmb.log.manager import LogManager
from hmb.net.server import endpoints, serve
from hmb.security.credentials import FILE_NAME as CREDENTIALS_FILE
from hmb.security.credentials import CredentialStore
from hmb.security.plain import PlainUsers
from hmb.settings import Settings
from hmb.txn.coordinator import TransactionCoordinator
from hmb.txn.state_log import TOPIC as TXN_STATE_TOPIC
from hmb.txn.state_log import TransactionStateLog

log = logging.getLogger(__name__)


class Broker:
    def __init__(self, config: BrokerConfig, *, clock: Clock | None = None) -> None:
        self.config = config
        self.clock = clock or Clock()  # the one time every expiry reads (hmb.clock)
        self.logs = LogManager(
            list(config.log_dirs), config.log, recovery_threads=config.num_recovery_threads_per_data_dir
        )
        self.logs.wall = self.clock.wall
        self.groups = GroupCoordinator(
            min_session_timeout_ms=config.group_min_session_timeout_ms,
            max_session_timeout_ms=config.group_max_session_timeout_ms,
            initial_rebalance_delay_ms=config.group_initial_rebalance_delay_ms,
            clock=self.clock,
        )
        self.cleaner = LogCleaner(
            self.logs,
            threads=config.log_cleaner_threads,
            dedupe_buffer_size=config.log_cleaner_dedupe_buffer_size,
            io_max_bytes_per_second=config.log_cleaner_io_max_bytes_per_second,
            backoff_ms=config.log_cleaner_backoff_ms,
            now_ms=self.clock.wall_ms,
        )
        self.settings = Settings(config, self.logs)
        self.services = Services(
            config, self.logs, self.groups, self.advertised, self.settings, clock=self.clock
        )
        self.dispatcher = Dispatcher(self.services)
        # a listener hmb cannot serve stops the broker here, with a ConfigError naming it
        self.endpoints = endpoints(config, self.dispatcher)
        self.services.plain_users = plain_users(config)
        self.bound: dict[str, tuple[str, int]] = {}
        self.control: Any = None  # hmb.control.api.Control, once a test or control.listener asks for it
        self.control_bound: tuple[str, int] | None = None

    def advertised(self, name: str | None = None) -> Listener:
        """The address clients of listener ``name`` (default: the first) are told:
        its advertised.listeners entry, else where it is bound."""
        listener = next((li for li in self.config.listeners if li.name == name), self.config.listener)
        advertised = self.config.advertised_for(listener.name)
        if advertised is not None:
            return advertised
        host, port = self.bound.get(listener.name, (listener.host, listener.port))
        if host in ("0.0.0.0", "::", ""):
            host = socket.getfqdn()
        return Listener(host, port, listener.name)

    @property
    def offsets(self) -> GroupOffsets:
        return self.services.offsets

    def open(self) -> None:
        """Load every partition and the committed offsets."""
        self.logs.load()
        self.settings.load()  # dynamic broker settings change the log's defaults
        plogs = self.logs.topics.get(OFFSETS_TOPIC) or self.logs.create_topic(
            OFFSETS_TOPIC, 1, OFFSETS_TOPIC_CONFIG
        )
        overrides = self.logs.topic_configs.overrides(OFFSETS_TOPIC)
        if any(key not in overrides for key in OFFSETS_TOPIC_CONFIG):  # made by an older hmb
            self.logs.set_topic_overrides(OFFSETS_TOPIC, {**OFFSETS_TOPIC_CONFIG, **overrides})
        # alone: every partition on disk is this broker's; in a cluster, those it leads, loaded
        # as it becomes their leader (hmb.groups.offset_partitions)
        offsets = GroupOffsets(len(plogs), self.clock.wall_ms)
        loaded = 0
        if self.services.cluster is None:
            loaded = sum(offsets.take_over(p, plog) for p, plog in enumerate(plogs))
        else:
            from hmb.interbroker.controlled_shutdown import ask_controller

            cluster = self.services.cluster
            cluster.offsets_led = functools.partial(follow_leadership, offsets, self.logs)
            cluster.ask_controller = ask_controller
        self.services.offsets = offsets
        self.services.transactions = self._load_transactions(offsets)
        # the security stores live beside meta.properties in the first log directory
        home = self.config.log_dirs[0]
        self.services.credentials = CredentialStore(home / CREDENTIALS_FILE)
        if self.config.authorizer_class_name:  # the ACL model is imported only when configured
            from hmb.security.authorizer import FILE_NAME as ACLS_FILE
            from hmb.security.authorizer import Authorizer

            self.services.authorizer = Authorizer(
                home / ACLS_FILE,
                super_users=Authorizer.parse_super_users(self.config.super_users),
                allow_everyone_if_no_acl_found=self.config.allow_everyone_if_no_acl_found,
            )
        if loaded:
            log.info("loaded %d committed-offset records from %s", loaded, OFFSETS_TOPIC)

    def _load_transactions(self, offsets: GroupOffsets) -> TransactionCoordinator:
        """The transaction coordinator over ``__transaction_state`` (created by the first transaction)."""
        coordinator = TransactionCoordinator(
            self.logs,
            offsets,
            TransactionStateLog(self.logs, self.clock.wall_ms),
            self.clock,
            max_timeout_ms=self.config.transaction_max_timeout_ms,
            id_expiration_ms=self.config.transactional_id_expiration_ms,
        )
        cluster = self.services.cluster
        if cluster is not None:  # ids coordinated as their state partitions are led here
            from hmb.interbroker.txn_add import add_at_coordinator
            from hmb.interbroker.txn_markers import send_markers
            from hmb.txn.leadership import follow_leadership, replicated_by
            from hmb.txn.remote_adds import RemoteAdds

            coordinator.coordinated = set()
            coordinator.state_log.replicated = replicated_by(cluster.replication)
            coordinator.send_markers = functools.partial(send_markers, cluster)
            ask = functools.partial(add_at_coordinator, cluster, coordinator.state_log.partition_of)
            coordinator.remote_adds = RemoteAdds(ask)
            cluster.txn_led = functools.partial(follow_leadership, coordinator)
            self.logs.producer_ids.reserve_block = cluster.reserve_producer_ids
            return coordinator
        loaded = coordinator.load()
        if loaded:
            log.info("loaded %d transactional ids from %s", loaded, TXN_STATE_TOPIC)
        return coordinator

    def close(self) -> None:
        self.logs.close()

    async def _start_control(self, nursery: trio.Nursery, listener: Listener) -> None:
        """The test-control endpoint (control.listener): imported only when configured."""
        from hmb.control.api import Control
        from hmb.control.gate import Gate
        from hmb.control.wire import serve_control

        control = self.control or Control(self)
        gate = Gate(self.config, self.services)
        self.control_bound = await nursery.start(serve_control, listener, control, gate)

    async def _join_cluster(self) -> None:
        """Cluster mode (zookeeper.connect): connect and settle the cluster id before the log loads."""
        from hmb.cluster.node import ClusterNode  # kazoo is loaded only by brokers in a cluster

        self.services.cluster = ClusterNode(self.config, self.logs)
        self.settings.topic_changed = self.services.cluster.topic_changed
        await self.services.cluster.join()

    async def _start_cluster(self, nursery: trio.Nursery) -> None:
        """Register with the bound addresses and follow the cluster; log what this broker is."""
        from hmb.cluster.layout import Endpoint

        cluster = self.services.cluster
        assert cluster is not None
        endpoints = []
        for listener in self.config.listeners:
            adv = self.advertised(listener.name)
            endpoints.append(
                Endpoint(listener.name, adv.host, adv.port, self.config.security_protocol(listener.name))
            )
        await nursery.start(cluster.run, endpoints)
        log.info(
            "broker %d in cluster %s: controller %d, %d broker(s) alive, leads %d partition(s)",
            cluster.broker_id,
            self.logs.cluster_id,
            cluster.view.controller,
            len(cluster.view.brokers),
            len(cluster.view.led_by(cluster.broker_id)),
        )

    async def run(self, *, task_status: trio.TaskStatus[tuple[str, int]] = trio.TASK_STATUS_IGNORED) -> None:
        if self.config.zookeeper_connect is not None:
            await self._join_cluster()
        self.open()
        try:
            async with trio.open_nursery() as nursery:
                self.bound = await nursery.start(serve, self.config, self.dispatcher, self.endpoints)
                host, port = self.bound[self.config.listener.name]
                await nursery.start(self.logs.run_retention, self.config.retention_check_interval_ms / 1000)
                await nursery.start(self.logs.run_flusher)
                if self.config.log_cleaner_enable and self.config.log_cleaner_threads > 0:
                    await nursery.start(self.cleaner.run)
                nursery.start_soon(self.logs.run_loader)  # partitions left unread by a clean start
                await nursery.start(self.groups.run)  # session and rebalance timeouts
                # transactions left half done, transaction timeouts, expired transactional ids
                await nursery.start(self.services.transactions.run)
                if self.config.control_listener is not None:
                    await self._start_control(nursery, self.config.control_listener)
                if self.services.cluster is not None:
                    await self._start_cluster(nursery)
                for name, (bound_host, bound_port) in self.bound.items():
                    adv = self.advertised(name)
                    log.info(
                        "hmb %s listening on %s:%d (listener %s, advertised %s:%d), data in %s",
                        __version__,
                        bound_host,
                        bound_port,
                        name,
                        adv.host,
                        adv.port,
                        ", ".join(str(d.resolve()) for d in self.config.log_dirs),
                    )
                task_status.started((host, port))
        finally:
            self.close()


def plain_users(config: BrokerConfig) -> dict[str, PlainUsers]:
    """Each SASL listener's PLAIN users, from listener.name.<listener>.plain.sasl.jaas.config."""
    out = {}
    for listener in config.listeners:
        key = "plain.sasl.jaas.config"
        text = config.listener_setting(listener.name, key)
        if text is not None:
            out[listener.name] = PlainUsers.from_jaas(text, f"listener.name.{listener.name.lower()}.{key}")
    return out
