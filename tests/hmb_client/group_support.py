"""Helpers of the consumer-group tests (test_groups_*.py): topics, producing, and
group members that poll in their own threads.

Each member owns its consumer in its own thread (a consumer is used from one
thread) and appends what ``poll()`` returns to a shared list; the tests then
wait, bounded, on conditions over those lists and the members' assignments.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from hmb_client.consumer import Consumer
from hmb_client.producer import Producer
from hmb_client.structs import TopicPartition

# Group timings for tests: rebalances noticed within half a second, and a session
# timeout above brokers' usual group.min.session.timeout.ms (6 s).
FAST_GROUP = {"heartbeat_interval_ms": 300, "session_timeout_ms": 6000}


def wait_until(cond: Callable[[], object], timeout: float, what: str) -> None:
    """Wait (bounded) until ``cond()`` holds; fail naming ``what``."""
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout:.0f}s: {what}")
        time.sleep(0.05)  # polling a condition on other threads' state


def create_topic(bootstrap: str, name: str, partitions: int) -> None:
    """Create a topic with librdkafka's admin client (an independent client)."""
    import confluent_kafka.admin as cka

    admin = cka.AdminClient({"bootstrap.servers": bootstrap, "log_level": 3})
    for future in admin.create_topics([cka.NewTopic(name, partitions, 1)], operation_timeout=30).values():
        future.result(60)


def value(i: int) -> bytes:
    return b"msg-%06d" % i


def produce(bootstrap: str, topic: str, start: int, stop: int, partitions: int) -> None:
    """Messages ``start..stop-1``, message i to partition i % partitions, acknowledged."""
    with Producer(bootstrap) as p:
        futures = [p.send(topic, value(i), partition=i % partitions) for i in range(start, stop)]
        p.flush(60)
        for f in futures:
            f.get(0)


class Member(threading.Thread):
    """An hmb_client consumer in a group, polling until stopped, then closing (commit + leave)."""

    def __init__(
        self,
        name: str,
        bootstrap: str,
        group: str,
        topics: list[str],
        sink: list[Any],
        listener: Any = None,
        **config: Any,
    ) -> None:
        super().__init__(name=name, daemon=True)
        self.bootstrap = bootstrap
        self.group = group
        self.topics = topics
        self.sink = sink
        self.listener = listener
        self.config = {"auto_offset_reset": "earliest", **FAST_GROUP, **config}
        self.assignment: set[TopicPartition] = set()
        self.stats: dict[str, Any] | None = None
        self.error: BaseException | None = None
        self._halt = threading.Event()
        self.closed = threading.Event()
        self.consumer: Consumer | None = None

    def run(self) -> None:
        try:
            c = self.consumer = Consumer(
                self.bootstrap, group_id=self.group, client_id=self.name, **self.config
            )
            try:
                c.subscribe(self.topics, self.listener)
                while not self._halt.is_set():
                    for r in c.poll(0.2):
                        self.sink.append((r.topic, r.partition, r.offset, r.value, self.name))
                    self.assignment = c.assignment()
                    self.stats = c.group_statistics()
            finally:
                c.close()
        except BaseException as exc:  # reported by the test
            self.error = exc
        finally:
            self.closed.set()

    def stop(self, timeout: float = 60) -> None:
        self._halt.set()
        if self.ident is None:  # never started
            return
        assert self.closed.wait(timeout), f"{self.name} did not close"
        assert self.error is None, f"{self.name} failed: {self.error!r}"


def split_among(members: list[Any], partitions: set[TopicPartition]) -> Callable[[], bool]:
    """A condition: the members' assignments are disjoint, non-empty, and cover ``partitions``."""

    def check() -> bool:
        parts = [m.assignment for m in members]
        return (
            all(parts) and sum(len(p) for p in parts) == len(partitions) and set().union(*parts) == partitions
        )

    return check


def exactly_once(sink: list[Any], expected: set[bytes]) -> None:
    """Every expected value consumed once, and no (partition, offset) twice."""
    counts = Counter((t, p, o) for t, p, o, _, _ in sink)
    dup = [k for k, n in counts.items() if n > 1]
    assert not dup, f"consumed twice: {sorted(dup)[:10]} ({len(dup)} in all)"
    got = [v for _, _, _, v, _ in sink]
    assert len(got) == len(set(got)) == len(expected) and set(got) == expected, (
        f"{len(got)} consumed, {len(set(got))} distinct, {len(expected)} expected; "
        f"missing {sorted(expected - set(got))[:5]}"
    )


class KafkaPythonMember(threading.Thread):
    """A kafka-python KafkaConsumer in the group (subscribe + poll), for mixed groups."""

    def __init__(self, name: str, bootstrap: str, group: str, topics: list[str], sink: list[Any]) -> None:
        super().__init__(name=name, daemon=True)
        self.args = (bootstrap, group, topics)
        self.sink = sink
        self.assignment: set[TopicPartition] = set()
        self.error: BaseException | None = None
        self._halt = threading.Event()
        self.closed = threading.Event()

    def run(self) -> None:
        from kafka import KafkaConsumer

        bootstrap, group, topics = self.args
        try:
            c = KafkaConsumer(
                bootstrap_servers=bootstrap,
                group_id=group,
                client_id=self.name,
                auto_offset_reset="earliest",
                heartbeat_interval_ms=300,
                session_timeout_ms=6000,
            )
            try:
                c.subscribe(topics)
                while not self._halt.is_set():
                    for records in c.poll(timeout_ms=200).values():
                        for r in records:
                            self.sink.append((r.topic, r.partition, r.offset, r.value, self.name))
                    self.assignment = {TopicPartition(tp.topic, tp.partition) for tp in c.assignment()}
            finally:
                c.close()
        except BaseException as exc:
            self.error = exc
        finally:
            self.closed.set()

    stop = Member.stop


class RdkafkaMember(KafkaPythonMember):
    """A confluent-kafka (librdkafka) Consumer in the group, for mixed groups."""

    def run(self) -> None:
        import confluent_kafka as ck

        bootstrap, group, topics = self.args
        try:
            c = ck.Consumer(
                {
                    "bootstrap.servers": bootstrap,
                    "group.id": group,
                    "client.id": self.name,
                    "auto.offset.reset": "earliest",
                    "heartbeat.interval.ms": 300,
                    "session.timeout.ms": 6000,
                    "log_level": 3,
                }
            )
            try:
                c.subscribe(topics)
                while not self._halt.is_set():
                    for m in c.consume(100, 0.2):
                        if m.error():
                            raise RuntimeError(str(m.error()))
                        self.sink.append((m.topic(), m.partition(), m.offset(), m.value(), self.name))
                    self.assignment = {TopicPartition(tp.topic, tp.partition) for tp in c.assignment()}
            finally:
                c.close()
        except BaseException as exc:
            self.error = exc
        finally:
            self.closed.set()
