"""Three ``hmb serve`` brokers on one ZooKeeper, each test in its own chroot."""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from bench.hmb_process import BrokerProcess

SESSION_MS = 2000  # short, so a killed broker's znodes expire within seconds
_chroots = itertools.count()


class Cluster:
    def __init__(self, connect: str, home: Path, size: int = 3, extra: tuple[str, ...] = ()) -> None:
        self.chroot = f"/hmb-test-{next(_chroots)}"
        self.connect = connect + self.chroot
        self.brokers = {
            i: BrokerProcess(
                home / f"broker{i}",
                f"zookeeper.connect={self.connect}",
                f"broker.id={i}",
                f"zookeeper.session.timeout.ms={SESSION_MS}",
                *extra,
            )
            for i in range(size)
        }
        self.zk = KazooClient(hosts=connect + self.chroot, timeout=10)

    def start(self) -> Cluster:
        for b in self.brokers.values():
            b.start(timeout=60)
        self.zk.start(timeout=10)
        return self

    @property
    def bootstrap(self) -> str:
        return ",".join(b.bootstrap for b in self.brokers.values() if b.alive())

    def json(self, path: str) -> Any:
        data, _ = self.zk.get(path)
        return json.loads(data)

    def json_if_any(self, path: str) -> Any:
        """The znode's JSON, or None when it does not exist (now: it may go between two reads)."""
        try:
            return self.json(path)
        except NoNodeError:
            return None

    def wait(self, condition: Callable[[], Any], timeout: float = 30.0, what: str = "") -> Any:
        deadline = time.monotonic() + timeout
        while True:
            value = condition()
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what or condition}")
            time.sleep(0.05)  # polling a condition, bounded by the deadline

    def close(self) -> None:
        for b in self.brokers.values():
            b.kill()
        self.zk.stop()
        self.zk.close()


def three_brokers(connect: str, home: Path, *extra: str) -> Iterator[Cluster]:
    """Three brokers with ``extra`` settings (``name=value``) besides the cluster's own."""
    cluster = Cluster(connect, home, extra=extra)
    try:
        yield cluster.start()
    finally:
        cluster.close()
