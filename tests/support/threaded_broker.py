"""The broker in a thread of the test process, with every listener it was given
(the SASL and TLS interop tests address each listener by name)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import trio

from hmb.broker import Broker
from hmb.config import BrokerConfig, from_properties, parse_properties


class ThreadedBroker:
    def __init__(self, data_dir: Path, *lines: str) -> None:
        self.config: BrokerConfig = from_properties(
            parse_properties("\n".join(lines)), BrokerConfig(log_dirs=(data_dir,))
        )
        self.bound: dict[str, tuple[str, int]] = {}
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._token: Any = None
        self._cancel: trio.CancelScope | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)

    def address(self, listener: str) -> str:
        host, port = self.bound[listener]
        return f"{host}:{port}"

    def _run(self) -> None:
        try:
            trio.run(self._main)
        except BaseException as exc:  # reported to the test
            self._error = exc
            self._ready.set()

    async def _main(self) -> None:
        self._token = trio.lowlevel.current_trio_token()
        broker = Broker(self.config)
        async with trio.open_nursery() as nursery:
            self._cancel = nursery.cancel_scope
            await nursery.start(broker.run)
            self.bound = dict(broker.bound)
            self._ready.set()

    def __enter__(self) -> ThreadedBroker:
        self._thread.start()
        if not self._ready.wait(30) or self._error is not None:
            raise RuntimeError(f"the broker did not start: {self._error!r}")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._cancel is not None:
            trio.from_thread.run_sync(self._cancel.cancel, trio_token=self._token)
        self._thread.join(30)
