"""The broker's ZooKeeper session: kazoo (a threaded client) bridged to trio.

Rules:

* kazoo blocks, trio must not: every ZooKeeper call runs in a worker
  thread (:meth:`ZkSession.run`, ``trio.to_thread``), and the broker's event
  loop only awaits it.
* kazoo calls watches and state changes on its own thread; they reach trio
  as one thing only, a wake-up (:meth:`ZkSession.changed`, posted with
  ``trio.from_thread``).  What changed is found by reading the tree again:
  watches are level triggers, never carriers of state, so a lost or merged
  notification cannot leave the broker with a stale picture.
* A lost session (ZooKeeper expired it: the broker was cut off for longer
  than ``zookeeper.session.timeout.ms``) removes the broker's ephemeral
  znodes; kazoo opens a new session by itself, and the wake-up it causes
  makes the broker register (and stand for controller) again.
* Every disconnection (suspended or lost) is counted
  (:attr:`ZkSession.disconnects`): a broker trusts its view only when it was
  read after the last one, so a leader cut off from ZooKeeper stops leading
  at once (see :meth:`hmb.cluster.node.ClusterNode.leads`).
* ``zookeeper.connect`` may end in a chroot (``host:port/hmb``): the chroot is
  made if missing, then every path the cluster uses lives under it.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from typing import Any, TypeVar

import trio
from kazoo.client import KazooClient, KazooState

log = logging.getLogger(__name__)

T = TypeVar("T")


def split_connect(connect: str) -> tuple[str, str]:
    """``host:port[,host:port]/chroot`` -> (hosts, chroot or '')."""
    hosts, slash, chroot = connect.partition("/")
    chroot = ("/" + chroot.strip("/")) if slash and chroot.strip("/") else ""
    return hosts, chroot


class ZkSession:
    """One kazoo client, started in a worker thread, whose events wake a trio task."""

    def __init__(self, connect: str, *, session_timeout_ms: int, connection_timeout_ms: int) -> None:
        self.hosts, self.chroot = split_connect(connect)
        self.connection_timeout_s = connection_timeout_ms / 1000
        self.client = KazooClient(hosts=self.hosts, timeout=session_timeout_ms / 1000)
        self._token: trio.lowlevel.TrioToken | None = None
        self._wake_send, self._wake_recv = trio.open_memory_channel[str](math.inf)
        #: set by kazoo's thread when the session was lost; the broker registers again
        self.lost = False
        #: how many times the connection was suspended or the session lost (kazoo's thread counts):
        #: a view read before the latest of them may be out of date
        self.disconnects = 0

    async def start(self) -> None:
        """Connect (bounded by ``zookeeper.connection.timeout.ms``) and make the chroot."""
        self._token = trio.lowlevel.current_trio_token()
        await trio.to_thread.run_sync(self._start_blocking)
        self.client.add_listener(self._on_state)

    def _start_blocking(self) -> None:
        self.client.start(timeout=self.connection_timeout_s)
        if self.chroot:
            self.client.ensure_path(self.chroot)
            self.client.chroot = self.chroot

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` in a worker thread: every blocking kazoo call goes through here."""
        return await trio.to_thread.run_sync(fn, *args)

    def watch(self, *_event: Any) -> None:
        """A kazoo watch callback (any znode): wake the broker's loop."""
        self._post("watch")

    def _on_state(self, state: str) -> None:
        if state == KazooState.LOST:
            self.lost = True
        if state != KazooState.CONNECTED:
            self.disconnects += 1
        log.info("ZooKeeper session %s", state.lower())
        self._post(f"session {state}")

    def _post(self, reason: str) -> None:
        token = self._token
        if token is None:
            return
        try:
            trio.from_thread.run_sync(self._wake_send.send_nowait, reason, trio_token=token)
        except (trio.RunFinishedError, trio.ClosedResourceError):
            pass  # the broker is stopping: nobody waits for wake-ups any more

    async def changed(self) -> list[str]:
        """Wait for the next wake-up, then take every one already queued with it."""
        reasons = [await self._wake_recv.receive()]
        while True:
            try:
                reasons.append(self._wake_recv.receive_nowait())
            except trio.WouldBlock:
                return reasons

    def nudge(self) -> None:
        """Wake the loop from trio itself (a request wrote something the loop must act on)."""
        self._wake_send.send_nowait("nudge")

    async def close(self) -> None:
        """End the session: its ephemeral znodes (registration, controller) go at once."""
        self._token = None
        await trio.to_thread.run_sync(self._close_blocking)

    def _close_blocking(self) -> None:
        try:
            self.client.stop()
            self.client.close()
        except Exception as exc:
            log.warning("closing the ZooKeeper session: %s", exc)
