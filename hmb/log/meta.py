"""What a log dir remembers about the broker: ``meta.properties`` and the producer-id block.

``meta.properties`` is Kafka's own file (``version=0``, ``cluster.id=...``):
the cluster id a client sees in Metadata v2+ must not change when the broker
restarts, so it is generated once (22 characters of URL-safe base64 of a
random UUID, as Kafka's ``Uuid.randomUuid``) and written, fsync'd, into every
log dir.  Log dirs that disagree about it are refused, as Kafka refuses them
(``InconsistentClusterIdException``): they belong to different clusters.

Producer ids (InitProducerId) must never be handed out twice, not even
across restarts, or a new producer would inherit an old one's sequence
state and have its first batches refused as duplicates or out of order.
Kafka's controller reserves ids in blocks of 1000 and persists the block
before using it; :class:`ProducerIdManager` does the same with a small JSON
file in every log dir, fsync'd (and the directory too) before any id of the
block is returned.  On start the next id is past both the persisted block
end and the largest producer id found in the logs' batch headers, so even a
lost block file cannot make an id come back while its batches exist.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

import trio

log = logging.getLogger(__name__)

META_FILE = "meta.properties"
PRODUCER_ID_FILE = "producer-id-block.json"
PRODUCER_ID_BLOCK_SIZE = 1000  # Kafka's ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE


class InconsistentClusterIdError(RuntimeError):
    """Log dirs with different cluster ids: they were written by different clusters."""


def write_durably(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` so that a crash leaves the old or the new file, fsync'd."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    sync_directory(path.parent)


def sync_directory(directory: Path) -> None:
    """fsync ``directory``, so that a rename or unlink in it survives a crash."""
    dir_fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def _read_properties(path: Path) -> dict[str, str]:
    props: dict[str, str] = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#") and "=" in line:
            key, _, value = line.partition("=")
            props[key.strip()] = value.strip()
    return props


def new_cluster_id() -> str:
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()


def recorded_cluster_id(log_dirs: list[Path]) -> str | None:
    """The cluster id the log dirs' meta.properties hold, without writing; None before the first start."""
    for d in log_dirs:
        meta = d / META_FILE
        if meta.exists():
            cid = _read_properties(meta).get("cluster.id")
            if cid:
                return cid
    return None


def load_cluster_id(log_dirs: list[Path], proposed: str | None = None) -> str:
    """The cluster id recorded in the log dirs, written on first start (``proposed``, the
    id of the cluster the broker joins, else a new one)."""
    found: dict[Path, str] = {}
    for d in log_dirs:
        meta = d / META_FILE
        if meta.exists():
            cid = _read_properties(meta).get("cluster.id")
            if cid:
                found[d] = cid
    ids = set(found.values())
    if len(ids) > 1:
        raise InconsistentClusterIdError(
            "log dirs belong to different clusters: "
            + ", ".join(f"{d} has cluster.id {c}" for d, c in sorted(found.items()))
        )
    cluster_id = ids.pop() if ids else proposed or new_cluster_id()
    for d in log_dirs:
        if d not in found:
            write_durably(d / META_FILE, f"#hmb meta.properties\nversion=0\ncluster.id={cluster_id}\n")
            log.info("cluster id %s written to %s", cluster_id, d / META_FILE)
    return cluster_id


class ProducerIdManager:
    """Hands out producer ids, never twice, from blocks persisted before use."""

    def __init__(self, log_dirs: list[Path], floor: int | Callable[[], int] = 0) -> None:
        """``floor``: no id below it is handed out (one past the largest id in the logs).

        A callable floor is asked, in a worker thread, before the first id is
        handed out: finding it reads every partition, which a start after a
        clean shutdown leaves for later.
        """
        self.log_dirs = log_dirs
        persisted = -1
        for d in log_dirs:
            path = d / PRODUCER_ID_FILE
            try:
                persisted = max(persisted, int(json.loads(path.read_text())["block_end"]))
            except FileNotFoundError:
                continue
            except (ValueError, KeyError, TypeError) as exc:
                log.warning("ignoring unreadable %s (%s); ids restart above the logs' largest", path, exc)
        self._floor: Callable[[], int] | None = None
        if callable(floor):
            self._floor, floor = floor, 0
        self._next = max(persisted + 1, floor)
        self._block_end = self._next - 1  # nothing reserved by this run yet
        self._lock = trio.Lock()
        #: in a cluster, where blocks come from instead of the log dirs: given the lowest id this
        #: broker may hand out and the block size, it returns the block (start, end) reserved for
        #: this broker alone (hmb.cluster.producer_ids, on ZooKeeper); None: alone, the log dirs
        self.reserve_block: Callable[[int, int], Awaitable[tuple[int, int]]] | None = None

    def _persist(self, start: int, end: int) -> None:
        text = json.dumps({"version": 1, "block_start": start, "block_end": end}) + "\n"
        for d in self.log_dirs:
            write_durably(d / PRODUCER_ID_FILE, text)

    async def allocate(self) -> int:
        """A producer id no one has had, durable before it is returned."""
        async with self._lock:
            if self._floor is not None:
                floor = await trio.to_thread.run_sync(self._floor)
                self._floor = None
                if floor > self._next:  # nothing handed out yet: the block starts past the floor
                    self._next = floor
                    self._block_end = floor - 1
            if self._next > self._block_end:
                if self.reserve_block is not None:
                    start, end = await self.reserve_block(self._next, PRODUCER_ID_BLOCK_SIZE)
                    self._next = start
                else:
                    start, end = self._next, self._next + PRODUCER_ID_BLOCK_SIZE - 1
                    await trio.to_thread.run_sync(self._persist, start, end)
                self._block_end = end
                log.info("reserved producer ids %d-%d", start, end)
            pid = self._next
            self._next += 1
            return pid
