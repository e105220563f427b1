"""Helpers of the admin and admin-tool tests: which APIs hmb serves, and a
consumer group with a known position.

``hmb_serves`` asks a broker started for the purpose what its ApiVersions
advertises, once per test run, so a test of an API the broker does not
serve yet is skipped with that reason and runs by itself once it does.
"""

from __future__ import annotations

import functools
from typing import Any

import pytest
from broker_process import InProcessBroker
from group_support import FAST_GROUP, wait_until
from test_modern_wire import negotiated

from hmb_client.consumer import Consumer
from hmb_client.producer import Producer
from hmb_client.structs import TopicPartition
from kproto import ApiKey


@functools.cache
def _hmb_versions() -> dict[int, tuple[int, int]]:
    with InProcessBroker() as b:
        return negotiated(b.bootstrap)


def hmb_serves(key: ApiKey, version: int = 0) -> bool:
    served = _hmb_versions().get(key)
    return served is not None and served[1] >= version


def needs_hmb(key: ApiKey, version: int = 0) -> pytest.MarkDecorator:
    """Skip unless hmb advertises ``key`` (at ``version`` or above) in ApiVersions."""
    return pytest.mark.skipif(
        not hmb_serves(key, version),
        reason=f"hmb does not serve {key.name}{f' v{version}' if version else ''} yet",
    )


def produce_n(bootstrap: str, topic: str, n: int, partition: int = 0, first_ts: int | None = None) -> None:
    """``n`` records to one partition, acknowledged; timestamps ``first_ts + i`` when given."""
    with Producer(bootstrap) as p:
        futures = [
            p.send(
                topic,
                b"v%d" % i,
                partition=partition,
                timestamp_ms=None if first_ts is None else first_ts + i,
            )
            for i in range(n)
        ]
        p.flush(30)
        for f in futures:
            f.get(0)


def consume_and_commit(bootstrap: str, topic: str, group: str, m: int) -> Any:
    """A group member (left open) that has read and committed ``m`` records of partition 0."""
    c = Consumer(
        bootstrap,
        group_id=group,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        client_id=f"{group}-client",
        **FAST_GROUP,
    )
    c.subscribe([topic])
    got: list[Any] = []
    wait_until(lambda: got.extend(c.poll(0.2)) or len(got) >= m, 30, f"{m} records read by {group}")
    c.commit({TopicPartition(topic, 0): m})
    return c
