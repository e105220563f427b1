"""The broker: the log, the groups, the committed offsets and the listener, in one nursery.

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

import logging
import socket

import trio

from hmb import __version__
from hmb.api.context import Services
from hmb.api.dispatch import Dispatcher
from hmb.config import BrokerConfig, Listener
from hmb.groups.coordinator import GroupCoordinator
from hmb.groups.offsets import TOPIC as OFFSETS_TOPIC
from hmb.groups.offsets import OffsetStore
from hmb.log.manager import LogManager
from hmb.net.server import serve

log = logging.getLogger(__name__)


class Broker:
    def __init__(self, config: BrokerConfig) -> None:
        self.config = config
        self.logs = LogManager(
            list(config.log_dirs), config.log, recovery_threads=config.num_recovery_threads_per_data_dir
        )
        self.groups = GroupCoordinator(
            min_session_timeout_ms=config.group_min_session_timeout_ms,
            max_session_timeout_ms=config.group_max_session_timeout_ms,
            initial_rebalance_delay_ms=config.group_initial_rebalance_delay_ms,
        )
        self.services = Services(config, self.logs, self.groups, self.advertised)
        self.dispatcher = Dispatcher(self.services)
        self.bound: tuple[str, int] | None = None

    def advertised(self) -> Listener:
        """The address clients are told: advertised.listeners, else the bound listener."""
        if self.config.advertised is not None:
            return self.config.advertised
        host, port = self.bound or (self.config.listener.host, self.config.listener.port)
        if host in ("0.0.0.0", "::", ""):
            host = socket.getfqdn()
        return Listener(host, port)

    @property
    def offsets(self) -> OffsetStore:
        return self.services.offsets

    def open(self) -> None:
        """Load every partition and the committed offsets."""
        self.logs.load()
        plog = self.logs.get(OFFSETS_TOPIC, 0) or self.logs.create_topic(OFFSETS_TOPIC, 1)[0]
        offsets = OffsetStore(plog)
        loaded = offsets.load()
        self.services.offsets = offsets
        if loaded:
            log.info("loaded %d committed-offset records from %s", loaded, OFFSETS_TOPIC)

    def close(self) -> None:
        self.logs.close()

    async def run(self, *, task_status: trio.TaskStatus[tuple[str, int]] = trio.TASK_STATUS_IGNORED) -> None:
        self.open()
        try:
            async with trio.open_nursery() as nursery:
                host, port = await nursery.start(serve, self.config, self.dispatcher)
                self.bound = (host, port)
                await nursery.start(self.logs.run_retention, self.config.retention_check_interval_ms / 1000)
                await nursery.start(self.logs.run_flusher)
                nursery.start_soon(self.logs.run_loader)  # partitions left unread by a clean start
                await nursery.start(self.groups.run)  # session and rebalance timeouts
                adv = self.advertised()
                log.info(
                    "hmb %s listening on %s:%d (advertised %s:%d), data in %s",
                    __version__,
                    host,
                    port,
                    adv.host,
                    adv.port,
                    ", ".join(str(d.resolve()) for d in self.config.log_dirs),
                )
                task_status.started((host, port))
        finally:
            self.close()
