"""The rAck producer: ``Producer(bootstrap_servers=..., acks="rack")``.

Rules:

* Every record gets a rAck id (a counter of this producer, decimal, in the
  ``rack.id`` header) and is sent with acks = -2: no answer is awaited, as
  with acks = 0.  Its backup goes to the monitor right after ``send()`` queued
  it (a receipt that comes first waits for it in the monitor); a record
  ``send()`` refused at once (too large, no such partition) has none, or its
  resends would fail for ever and ``flush()`` never return.
* The origin that receipts name is the producer's ``client_id``.  Without an
  explicit one it is ``hmb-rack-`` and eight random hex digits, so that two
  rAck producers never read each other's receipts.
* The monitor runs in this process, or in an ``hmb rack-monitor`` named by
  ``rack_monitor`` (:mod:`hmb_client.rack.remote`).
* :meth:`RackProducer.flush` returns once every record sent so far was
  confirmed by a receipt or resent and acknowledged (:meth:`Monitor.flush`);
  records the monitor could not get acknowledged within the timeout raise
  :class:`~hmb_client.errors.KafkaTimeoutError`.
* Key and value serializers run here, once: the backup keeps the bytes that
  were sent.

What rAck does not give: order (a resend arrives after later records), nor
exactly-once (a record whose receipt was lost is resent: a duplicate).
"""

from __future__ import annotations

import itertools
import secrets
import time
from dataclasses import fields
from typing import Any

from hmb_client.errors import KafkaTimeoutError
from hmb_client.producer.batches import FutureRecordMetadata, Headers, as_bytes
from hmb_client.producer.producer import Producer
from hmb_client.rack.backups import Backup
from hmb_client.rack.monitor import Monitor
from hmb_client.rack.remote import RemoteMonitor
from hmb_client.security import SecuritySettings

__all__ = ["ID_HEADER", "RackProducer"]

#: the record header carrying a record's rAck id (the broker's receipts name it)
ID_HEADER = "rack.id"


class RackProducer(Producer):
    """A producer sending with acks = -2 and an in-process :class:`Monitor`."""

    def __init__(self, bootstrap_servers: str | list[str] = "127.0.0.1:9092", **config: Any) -> None:
        config["acks"] = "rack"
        config.setdefault("client_id", f"hmb-rack-{secrets.token_hex(4)}")
        super().__init__(bootstrap_servers, **config)
        cfg = self.config
        self._rack_key_serializer = self._key_serializer
        self._rack_value_serializer = self._value_serializer
        self._key_serializer = self._value_serializer = None  # applied here, once, for the backup
        self._ids = itertools.count()
        self._watched: set[str] = set()
        self.monitor: Monitor | RemoteMonitor
        if cfg.rack_monitor:
            self.monitor = RemoteMonitor(cfg.rack_monitor, cfg.client_id)
        else:
            security = {f.name: getattr(cfg, f.name) for f in fields(SecuritySettings)}
            self.monitor = Monitor(
                bootstrap_servers,
                cfg.client_id,
                slots=cfg.rack_backup_slots,
                max_slots=cfg.rack_backup_max_slots,
                retry_interval_ms=cfg.rack_retry_interval_ms,
                receipt_wait_ms=cfg.rack_receipt_wait_ms,
                zookeeper_connect=cfg.rack_zookeeper_connect,
                resend_config={**security, "client_id": f"{cfg.client_id}-resend"},
            )

    def send(
        self,
        topic: str,
        value: Any = None,
        key: Any = None,
        headers: Headers | None = None,
        partition: int | None = None,
        timestamp_ms: int | None = None,
    ) -> FutureRecordMetadata:
        """Back the record up with the monitor, then send it with acks = -2."""
        if key is not None:
            if self._rack_key_serializer is not None:
                key = self._rack_key_serializer(key)
            key = as_bytes("key", key)
        if value is not None:
            if self._rack_value_serializer is not None:
                value = self._rack_value_serializer(value)
            value = as_bytes("value", value)
        if timestamp_ms is None:
            timestamp_ms = time.time_ns() // 1_000_000
        rid = str(next(self._ids))
        all_headers = [*(headers or ()), (ID_HEADER, rid.encode())]
        if topic not in self._watched:
            self._watched.add(topic)
            self.monitor.watch(topic)
        future = super().send(topic, value, key, all_headers, partition, timestamp_ms)
        if not (future.done() and future.exception(0) is not None):  # refused at once: nothing to back up
            self.monitor.backup(Backup(topic, rid, value, key, all_headers, partition, timestamp_ms))
        return future

    def flush(self, timeout: float | None = None) -> None:
        """Send everything queued; return once every record is confirmed or resent and acknowledged."""
        deadline = None if timeout is None else time.monotonic() + timeout
        super().flush(timeout)
        remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
        if not self.monitor.flush(remaining):
            raise KafkaTimeoutError(f"rAck: resends not acknowledged within {timeout}s")

    def close(self, timeout: float | None = None) -> None:
        if self._closed:
            return
        try:
            super().close(timeout)
        finally:
            self.monitor.close()
