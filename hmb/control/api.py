"""The control API of one broker, for tests: inspect, inject faults, move the clock, seed, snapshot.

Every method runs in the broker's trio thread (the embedded broker's
synchronous methods and the wire endpoint both call them there).  Creating
a :class:`Control` installs its :class:`~hmb.control.faults.Interceptor` in
the broker's dispatcher: from then on every request is logged and faults
can be armed; a broker without a Control has neither cost.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from hmb.control import state
from hmb.control.faults import Fault, Interceptor

if TYPE_CHECKING:
    from hmb.broker import Broker


class Control:
    """Test-facing operations over one running :class:`hmb.broker.Broker`."""

    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        self.interceptor = Interceptor()
        self.interceptor.topic_names = broker.logs.topics_by_id  # the live table, kept up to date by the log
        broker.dispatcher.interceptor = self.interceptor
        broker.control = self

    @property
    def _services(self):  # type: ignore[no-untyped-def]
        return self.broker.services

    # ---------------------------------------------------------------- topics

    async def create_topic(self, name: str, partitions: int = 1) -> None:
        """Create ``name`` (no-op when it exists)."""
        await self.broker.logs.create_topic_async(name, partitions)

    async def delete_topic(self, name: str) -> None:
        await self.broker.logs.delete_topic(name)

    async def topics(self) -> dict[str, int]:
        """Every topic and its partition count."""
        return {t: len(logs) for t, logs in self.broker.logs.topics.items()}

    # ---------------------------------------------------------------- inspect

    async def records(self, topic: str, partition: int = 0, start: int | None = None) -> list[dict[str, Any]]:
        return state.records(self._services, topic, partition, start)

    async def watermarks(self, topic: str, partition: int = 0) -> dict[str, int]:
        return state.watermarks(self._services, topic, partition)

    async def committed(self, group: str) -> dict[tuple[str, int], int]:
        return state.committed(self._services, group)

    async def group(self, group_id: str) -> dict[str, Any]:
        return state.group(self._services, group_id)

    async def producers(self, topic: str, partition: int = 0) -> dict[int, dict[str, int]]:
        return state.producers(self._services, topic, partition)

    async def requests(self) -> list[dict[str, Any]]:
        """The requests received so far, oldest first (api_key, api_name, version, client_id, ...)."""
        return [r.as_dict() for r in self.interceptor.requests]

    async def clear_requests(self) -> None:
        self.interceptor.requests.clear()

    async def cleaner(self) -> list[dict[str, Any]]:
        """The log cleaner's state of every compacted partition: dirty ratio, last clean time
        (epoch ms, -1: never), bytes cleaned and removed, cleanings, where the dirty part starts."""
        return self.broker.cleaner.state()

    async def clean_logs(self) -> int:
        """Clean now every compacted partition that needs it (by ratio, lag or horizon, as of the
        broker's clock); returns how many were cleaned."""
        return await self.broker.cleaner.clean_all()

    # ---------------------------------------------------------------- faults

    async def inject(
        self,
        api: int | str,
        *,
        count: int = 1,
        error: int | str | None = None,
        delay_s: float = 0.0,
        drop: bool = False,
        topic: str | None = None,
        partition: int | None = None,
    ) -> Fault:
        """Answer the next ``count`` requests of ``api`` with ``error`` / a delay / a dropped connection."""
        return self.interceptor.inject(
            api, count=count, error=error, delay_s=delay_s, drop=drop, topic=topic, partition=partition
        )

    async def make_unavailable(self, seconds: float) -> None:
        """Close the connection of every request for ``seconds`` from now."""
        self.interceptor.make_unavailable(seconds)

    async def clear_faults(self) -> None:
        self.interceptor.clear()

    async def limit_versions(self, caps: dict[int | str, int]) -> dict[int, int]:
        """Advertise and accept at most these versions (``{"PRODUCE": 8}``; ``{}`` lifts every cap),
        as an older broker would: :mod:`hmb.control.versions`."""
        return self.interceptor.limit_versions(caps)

    # ---------------------------------------------------------------- the clock

    async def advance_clock(self, delta: timedelta | float) -> None:
        """Move the broker's time forward and let everything that is now due expire, before returning.

        Session and rebalance timeouts expire, timed-out transactions are
        aborted and retention runs as of the new time, so a test can assert
        the outcome right after this call.
        """
        seconds = delta.total_seconds() if isinstance(delta, timedelta) else float(delta)
        clock = self.broker.clock
        clock.advance(seconds)
        self.broker.groups.expire(clock.monotonic())
        await self.broker.services.transactions.expire()
        await self.broker.logs.apply_retention(clock.wall())

    # ---------------------------------------------------------------- seed and snapshot

    async def seed(self, lines: Iterable[str]) -> dict[str, int]:
        """Load topics, records and committed offsets from JSON lines (:mod:`hmb.control.state`)."""
        return await state.seed(self._services, lines, self.broker.clock.wall_ms())

    async def snapshot(self) -> list[str]:
        """The broker's topics, records and committed offsets as JSON lines."""
        return list(state.snapshot(self._services))
