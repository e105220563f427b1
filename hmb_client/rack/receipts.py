"""Where a rAck monitor learns which records arrived: the broker's receipts.

Each source runs in its own thread and calls ``confirm([(topic, id), ...])``
with the receipts ``origin;destination;id`` whose origin is the monitor's
producer, a batch at a time (one lock taken per batch, not per record).

* :class:`TopicReceipts`: a broker alone writes its receipts as records of
  the internal topic ``__rack_receipts``; the source reads it with an
  ordinary consumer, from the end it had when the monitor started (the
  beginning when the topic does not exist yet: then every receipt is new).
  Each of its records holds the receipts of one record set, a line each.
* :class:`ZooKeeperReceipts`: brokers of a cluster write TTL sequential
  znodes ``/brokers/topics/<topic>/produce - <n>``; the source watches the
  children of each topic the producer writes to, reads the new ones, and
  deletes the receipts of its own origin once read, so that the list it reads
  on the next change stays short (the TTL removes what nobody reads).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)

TOPIC = "__rack_receipts"
RECEIPT_NAME = "produce - "
#: receipts read (and confirmed) at a time: a backlog of 100,000 read whole was confirmed only
#: after every read had come back, tens of seconds in which the monitor saw no progress
READ_CHUNK = 2_000

Confirm = Callable[[list[tuple[str, str]]], object]  # [(topic, id), ...]


def parse(line: bytes | str) -> tuple[str, str, str] | None:
    """``origin;destination;id`` -> its three parts (the id may itself hold ';')."""
    text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
    parts = text.split(";", 2)
    return (parts[0], parts[1], parts[2]) if len(parts) == 3 else None


class TopicReceipts:
    """Follows ``__rack_receipts`` with a consumer of its own."""

    def __init__(
        self, bootstrap_servers: str | list[str], origin: str, confirm: Confirm, **security: object
    ) -> None:
        from hmb_client.consumer import Consumer
        from hmb_client.structs import TopicPartition

        self.origin = origin
        self._confirm = confirm
        self._stop = threading.Event()
        self._tp = TopicPartition(TOPIC, 0)
        self._consumer = Consumer(bootstrap_servers, auto_offset_reset="earliest", **security)
        self._consumer.assign([self._tp])
        try:
            end = self._consumer.end_offsets([self._tp])[self._tp]
        except Exception as exc:  # no such topic yet: every receipt to come is new
            log.debug("rAck receipts topic not there yet (%s): reading from its start", exc)
            end = 0
        self._consumer.seek(self._tp, end)
        self._thread = threading.Thread(target=self._run, name="hmb-rack-receipts", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        origin = self.origin
        while not self._stop.is_set():
            try:
                records = self._consumer.poll(timeout=0.2)
            except Exception as exc:  # the broker away for a while: keep trying
                log.debug("reading rAck receipts: %s", exc)
                self._stop.wait(0.2)
                continue
            mine = []
            for r in records:
                if r.key is not None and r.key.decode("utf-8", "replace") != origin:
                    continue  # another producer's record set
                for line in (r.value or b"").split(b"\n"):
                    got = parse(line)
                    if got is not None and got[0] == origin:
                        mine.append((got[1], got[2]))
            if mine:
                self._confirm(mine)

    def watch(self, topic: str) -> None:
        """Nothing to do: one topic holds every destination's receipts."""

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        self._consumer.close(autocommit=False)


class ZooKeeperReceipts:
    """Watches the receipt znodes of the producer's topics (kazoo, its own threads)."""

    def __init__(self, connect: str, origin: str, confirm: Confirm) -> None:
        from kazoo.client import KazooClient

        self.origin = origin
        self._confirm = confirm
        self._zk = KazooClient(hosts=connect, timeout=10)
        self._zk.start(timeout=15)
        self._topics: dict[str, set[str]] = {}  # topic -> receipt names already read
        self._lock = threading.Lock()
        self._changed = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="hmb-rack-zk-receipts", daemon=True)
        self._thread.start()

    def watch(self, topic: str) -> None:
        """Start following ``topic``'s receipts (the producer writes to it now)."""
        with self._lock:
            if topic in self._topics:
                return
            self._topics[topic] = set()
        self._changed.set()

    def _wake(self, *_event: object) -> None:
        self._changed.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            self._changed.wait(0.5)  # a watch fires it; the timeout covers a lost watch
            self._changed.clear()
            with self._lock:
                topics = list(self._topics)
            for topic in topics:
                try:
                    self._read(topic)
                except Exception as exc:  # ZooKeeper away: the next round reads again
                    log.debug("reading rAck receipts of %s: %s", topic, exc)

    def _read(self, topic: str) -> None:
        from kazoo.exceptions import NoNodeError

        parent = f"/brokers/topics/{topic}"
        try:
            children = self._zk.get_children(parent, watch=self._wake)
        except NoNodeError:
            self._zk.exists(parent, watch=self._wake)
            return
        seen = self._topics[topic]
        new = [c for c in children if c.startswith(RECEIPT_NAME) and c not in seen]
        for start in range(0, len(new), READ_CHUNK):
            gets = [(c, self._zk.get_async(f"{parent}/{c}")) for c in new[start : start + READ_CHUNK]]
            mine = []
            confirmed = []
            for name, pending in gets:
                try:
                    data, _stat = pending.get(timeout=30)
                except NoNodeError:
                    continue  # expired or read by someone else
                got = parse(data)
                if got is not None and got[0] == self.origin:
                    confirmed.append((got[1], got[2]))
                    mine.append(name)
            if confirmed:
                self._confirm(confirmed)
            for name in mine:
                self._zk.delete_async(f"{parent}/{name}")
        current = set(children)
        seen.intersection_update(current)  # gone from ZooKeeper: never listed again
        seen.update(new)  # ours too: until their deletes land they are still listed

    def close(self) -> None:
        self._stop.set()
        self._changed.set()
        self._thread.join(timeout=10)
        self._zk.stop()
        self._zk.close()
