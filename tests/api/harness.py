"""The in-process harness: a real :class:`hmb.broker.Broker` over a temporary log, no socket.

Requests are encoded with kproto, handed to the broker's dispatcher as the
network layer would hand them (one frame, one :class:`Session`), and the
answer is decoded with kproto.  A response in pieces (Fetch's file regions)
is joined into the bytes ``os.sendfile`` would have sent.  So these tests
cover decoding, version gating, the handler and encoding of every request,
in milliseconds, without a process or a port.

Rules for tests built on it:

* a test is an ``async def`` taking the ``broker`` (default settings) or
  ``make_broker`` fixture; ``conftest.py`` runs it in ``trio.run``;
* settings are given as Kafka properties, as the real broker takes them:
  ``make_broker("num.partitions=3")``;
* a request that waits (a long-poll Fetch, a JoinGroup) is started with
  :func:`in_background` and its answer awaited later, so one test can play
  several clients;
* what needs a process or the network (crashes, sockets, real clients)
  stays in ``tests/system`` and ``tests/interop``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

import kproto
from hmb.api.context import RawResponse, Session
from hmb.broker import Broker
from hmb.config import BrokerConfig, from_properties, parse_properties

CLIENT_ID = "api-test"
PEER = "127.0.0.1:40000"


def broker_config(data_dir: Path, *overrides: str) -> BrokerConfig:
    """The broker's settings: defaults, the log in ``data_dir``, then ``key=value`` overrides."""
    base = BrokerConfig(log_dirs=(data_dir,))
    return from_properties(parse_properties("\n".join(overrides)), base)


def response_bytes(outcome: bytes | RawResponse | None) -> bytes | None:
    """The bytes the network layer would write for a dispatcher outcome."""
    if not isinstance(outcome, RawResponse):
        return outcome
    with outcome.resources:
        return b"".join(p if isinstance(p, bytes) else p.read() for p in outcome.parts)


class InProcessBroker:
    """One broker, opened over ``data_dir``, answering frames through its dispatcher."""

    def __init__(self, data_dir: Path, *overrides: str) -> None:
        self.data_dir = data_dir
        self.config = broker_config(data_dir, *overrides)
        self.broker = self._open()
        self.correlation_id = 0

    def _open(self) -> Broker:
        broker = Broker(self.config)
        broker.open()
        self._timers_for: object = None
        self._open_now = True
        return broker

    @property
    def port(self) -> int:
        """The port clients are told (no listener is bound: the configured one)."""
        return self.broker.advertised().port

    def close(self) -> None:
        """A clean shutdown: the log flushed and closed, as when the process stops."""
        if self._open_now:
            self._open_now = False
            self.broker.close()

    def restart(self) -> None:
        """Stop cleanly and open a new broker over the same log."""
        self.close()
        self.broker = self._open()

    def _start_timers(self) -> None:
        """Run the coordinators' timers (sessions, rebalances, transaction timeouts) in this trio run."""
        root = trio.lowlevel.current_root_task()
        if self._timers_for is not root:
            self._timers_for = root
            trio.lowlevel.spawn_system_task(self.broker.groups.run)
            trio.lowlevel.spawn_system_task(self.broker.services.transactions.run)

    async def dispatch(self, frame: bytes, session: Session | None = None) -> bytes | None:
        """The response frame to ``frame`` (None: no answer); raises what the dispatcher raises."""
        self._start_timers()
        outcome = await self.broker.dispatcher.dispatch(frame, session or Session(PEER))
        return response_bytes(outcome)

    def encode(self, api_key: int, version: int, body: dict[str, Any], client_id: str = CLIENT_ID) -> bytes:
        self.correlation_id += 1
        return kproto.encode_request(api_key, version, self.correlation_id, body, client_id=client_id)

    async def send(
        self, api_key: int, version: int, body: dict[str, Any], *, session: Session | None = None
    ) -> bytes | None:
        """Send a request; the raw response frame, or None when the broker answers nothing."""
        return await self.dispatch(self.encode(api_key, version, body), session)

    async def request(
        self,
        api_key: int,
        version: int,
        body: dict[str, Any],
        *,
        session: Session | None = None,
        client_id: str = CLIENT_ID,
    ) -> Any:
        """Send a request and decode its answer (the response body)."""
        frame = self.encode(api_key, version, body, client_id)
        cid = self.correlation_id
        out = await self.dispatch(frame, session)
        assert out is not None, "the broker sent no answer"
        resp = kproto.decode_response(api_key, version, out)
        assert resp.correlation_id == cid
        return resp.body


@dataclass
class Background:
    """A request running in a nursery: ``await result()`` for its answer."""

    done: trio.Event = field(default_factory=trio.Event)
    value: Any = None
    error: BaseException | None = None

    async def result(self) -> Any:
        await self.done.wait()
        if self.error is not None:
            raise self.error
        return self.value


def in_background(nursery: trio.Nursery, fn: Callable[[], Awaitable[Any]]) -> Background:
    """Start ``fn()`` now (it runs at the next checkpoint) and return a handle to its answer."""
    out = Background()

    async def run() -> None:
        try:
            out.value = await fn()
        except Exception as exc:
            out.error = exc
        finally:
            out.done.set()

    nursery.start_soon(run)
    return out


async def wait_for(
    condition: Callable[[], Awaitable[bool] | bool], what: str, timeout: float = 15.0
) -> float:
    """Poll a condition the way a client does (its heartbeat interval); returns the seconds taken."""
    start = trio.current_time()
    while True:
        met = condition()
        if not isinstance(met, bool):
            met = await met
        if met:
            return trio.current_time() - start
        if trio.current_time() - start > timeout:
            raise AssertionError(f"timed out waiting until {what}")
        await trio.sleep(0.05)
