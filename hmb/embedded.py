"""A broker inside the test process: ``with hmb.Broker() as broker: broker.bootstrap_servers``.

Rules:

* It is the real broker (:class:`hmb.broker.Broker`): the same listener,
  dispatcher, log and group code as ``hmb serve``, on a free loopback port
  (port 0 unless told otherwise).
* Its data lives in a fresh temporary directory, removed on stop.  Where
  ``/dev/shm`` exists (Linux) the directory is made there: a tmpfs, so the
  log's files, memory-mapped indexes and fsyncs are RAM operations and the
  broker needs no disk, while the log code is exactly the one that runs on
  disk (no second, in-memory implementation to drift from it).
* Two ways to run it: in its own thread running trio (:meth:`start` /
  ``with``), or as a task in a caller's trio nursery
  (``await nursery.start(broker.run)``).  Several brokers per process are
  independent: each has its own thread (or task), port, directory, clock
  and control.
* Every broker started here is under test control (:mod:`hmb.control`):
  requests are logged and faults can be armed.  In thread mode the control
  methods below are synchronous and run in the broker's thread; in nursery
  mode use the same names on :attr:`control` with ``await``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import weakref
from collections.abc import Iterable, Mapping
from datetime import timedelta
from pathlib import Path
from types import TracebackType
from typing import Any

import trio

from hmb.broker import Broker
from hmb.config import from_properties
from hmb.control.api import Control
from hmb.control.faults import Fault

_SHM = Path("/dev/shm")


def _temp_dir() -> Path:
    base = _SHM if _SHM.is_dir() and os.access(_SHM, os.W_OK) else None
    return Path(tempfile.mkdtemp(prefix="hmb-", dir=base))


class EmbeddedBroker:
    """A broker in this process, on a free port, over a temporary directory (exported as ``hmb.Broker``)."""

    def __init__(
        self,
        properties: Mapping[str, str] | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        data_dir: str | Path | None = None,
    ) -> None:
        self._own_dir = data_dir is None
        self.data_dir = _temp_dir() if data_dir is None else Path(data_dir)
        if self._own_dir:  # a broker never stopped must not leave its directory in /dev/shm
            weakref.finalize(self, shutil.rmtree, self.data_dir, ignore_errors=True)
        props = {
            "listeners": f"PLAINTEXT://{host}:{port}",
            "log.dirs": str(self.data_dir),
            **(properties or {}),
        }
        self.config = from_properties(props)
        self.core: Broker | None = None
        self._control: Control | None = None
        self._address: tuple[str, int] | None = None
        self._thread: threading.Thread | None = None
        self._token: trio.lowlevel.TrioToken | None = None
        self._cancel: trio.CancelScope | None = None

    # ---------------------------------------------------------------- running

    async def run(self, *, task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED) -> None:
        """Run in the caller's trio nursery; reports the bootstrap address once listening."""
        core = Broker(self.config)
        self.core = core
        self._control = Control(core)
        try:
            async with trio.open_nursery() as nursery:
                self._address = await nursery.start(core.run)
                task_status.started(self.bootstrap_servers)
        finally:
            self._address = None
            self._remove_dir()

    def start(self) -> EmbeddedBroker:
        """Start in a thread of its own; returns once the broker answers on its port."""
        if self._thread is not None:
            raise RuntimeError("this broker is already running")
        ready = threading.Event()
        failure: list[BaseException] = []

        async def main() -> None:
            self._token = trio.lowlevel.current_trio_token()
            with trio.CancelScope() as scope:
                self._cancel = scope
                async with trio.open_nursery() as nursery:
                    await nursery.start(self.run)
                    ready.set()

        def thread_main() -> None:
            try:
                trio.run(main)
            except BaseException as exc:  # handed to the starting thread
                failure.append(exc)
            finally:
                ready.set()

        self._thread = threading.Thread(target=thread_main, name="hmb-embedded-broker", daemon=True)
        self._thread.start()
        ready.wait()
        if failure:
            self._thread.join()
            self._thread = None
            raise RuntimeError(f"the embedded broker did not start: {failure[0]!r}") from failure[0]
        return self

    def stop(self) -> None:
        """Stop the thread, close the log and remove the temporary directory."""
        thread, self._thread = self._thread, None
        if thread is None:
            return
        if thread.is_alive() and self._cancel is not None and self._token is not None:
            try:
                trio.from_thread.run_sync(self._cancel.cancel, trio_token=self._token)
            except trio.RunFinishedError:
                pass
        thread.join()

    def __enter__(self) -> EmbeddedBroker:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def _remove_dir(self) -> None:
        if self._own_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    # ---------------------------------------------------------------- addresses

    @property
    def address(self) -> tuple[str, int]:
        if self._address is None:
            raise RuntimeError("the broker is not running")
        return self._address

    @property
    def bootstrap_servers(self) -> str:
        """``host:port``, what every Kafka client takes as its bootstrap servers."""
        host, port = self.address
        return f"{host}:{port}"

    @property
    def control(self) -> Control:
        """The control API, for ``await`` from the broker's own trio thread."""
        if self._control is None:
            raise RuntimeError("the broker is not running")
        return self._control

    def _call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        if self._token is None or self._thread is None:
            raise RuntimeError(f"not started in a thread: use `await broker.control.{name}(...)`")
        method = getattr(self.control, name)

        async def call() -> Any:
            return await method(*args, **kwargs)

        return trio.from_thread.run(call, trio_token=self._token)

    # ---------------------------------------------------------------- control, synchronously

    def create_topic(self, name: str, partitions: int = 1) -> str:
        self._call("create_topic", name, partitions)
        return name

    def delete_topic(self, name: str) -> None:
        self._call("delete_topic", name)

    def topics(self) -> dict[str, int]:
        result: dict[str, int] = self._call("topics")
        return result

    def records(self, topic: str, partition: int = 0, start: int | None = None) -> list[dict[str, Any]]:
        """Records of a partition: offset, timestamp, key, value, headers."""
        result: list[dict[str, Any]] = self._call("records", topic, partition, start)
        return result

    def watermarks(self, topic: str, partition: int = 0) -> dict[str, int]:
        """``log_start_offset`` and ``high_watermark`` of a partition."""
        result: dict[str, int] = self._call("watermarks", topic, partition)
        return result

    def committed(self, group: str) -> dict[tuple[str, int], int]:
        result: dict[tuple[str, int], int] = self._call("committed", group)
        return result

    def group(self, group_id: str) -> dict[str, Any]:
        """State, generation, leader and members (client id, host, assignment) of a group."""
        result: dict[str, Any] = self._call("group", group_id)
        return result

    def producers(self, topic: str, partition: int = 0) -> dict[int, dict[str, int]]:
        result: dict[int, dict[str, int]] = self._call("producers", topic, partition)
        return result

    def cleaner(self) -> list[dict[str, Any]]:
        """The log cleaner's state of each compacted partition (dirty ratio, last clean, bytes cleaned)."""
        result: list[dict[str, Any]] = self._call("cleaner")
        return result

    def clean_logs(self) -> int:
        """Clean every compacted partition that needs it now; how many were cleaned."""
        result: int = self._call("clean_logs")
        return result

    def requests(self) -> list[dict[str, Any]]:
        """Every request received: api_key, api_name, version, client_id, correlation_id, peer."""
        result: list[dict[str, Any]] = self._call("requests")
        return result

    def clear_requests(self) -> None:
        self._call("clear_requests")

    def inject(
        self,
        api: int | str,
        *,
        count: int = 1,
        error: int | str | None = None,
        delay: timedelta | float = 0.0,
        drop: bool = False,
        topic: str | None = None,
        partition: int | None = None,
    ) -> Fault:
        """Answer the next ``count`` requests of ``api`` with ``error``, after ``delay``, or drop them."""
        delay_s = delay.total_seconds() if isinstance(delay, timedelta) else float(delay)
        fault: Fault = self._call(
            "inject",
            api,
            count=count,
            error=error,
            delay_s=delay_s,
            drop=drop,
            topic=topic,
            partition=partition,
        )
        return fault

    def make_unavailable(self, duration: timedelta | float) -> None:
        seconds = duration.total_seconds() if isinstance(duration, timedelta) else float(duration)
        self._call("make_unavailable", seconds)

    def clear_faults(self) -> None:
        self._call("clear_faults")

    def limit_versions(self, caps: dict[int | str, int]) -> dict[int, int]:
        """Advertise and accept at most these versions, as an older broker (``{"FETCH": 11}``
        serves Fetch up to v11, before its flexible layout; ``{}`` lifts every cap)."""
        result: dict[int, int] = self._call("limit_versions", caps)
        return result

    def advance_clock(self, delta: timedelta | float) -> None:
        """Move the broker's time forward; whatever is now due (sessions, retention) happens before return."""
        self._call("advance_clock", delta)

    def seed(self, source: str | Path | Iterable[str]) -> dict[str, int]:
        """Load a JSON-lines seed (a path or the lines themselves)."""
        lines = Path(source).read_text().splitlines() if isinstance(source, (str, Path)) else list(source)
        result: dict[str, int] = self._call("seed", lines)
        return result

    def snapshot(self, path: str | Path | None = None) -> list[str]:
        """The broker's state as JSON lines; also written to ``path`` when given."""
        lines: list[str] = self._call("snapshot")
        if path is not None:
            Path(path).write_text("".join(line + "\n" for line in lines))
        return lines
