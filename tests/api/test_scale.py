"""2,000 partitions through the API, as a reduced run of ``python -m bench scale``:
Metadata lists every one, the last one takes a record and gives it back, and a
clean restart keeps them all (their files read at first use, or in the
background)."""

from __future__ import annotations

from typing import Any

from kproto import ApiKey, ErrorCode

from .bodies import batch, create, fetch_req, new_producer_id, produce_body, spec
from .harness import InProcessBroker

TOPICS, PER_TOPIC = 20, 100  # 2,000 partitions


def _names() -> list[str]:
    return [f"scale-{i:02d}" for i in range(TOPICS)]


async def _listed(b: InProcessBroker) -> dict[str, int]:
    md = await b.request(ApiKey.METADATA, 1, {"topics": None})
    return {t.name: len(t.partitions) for t in md.topics if t.error_code == ErrorCode.NONE}


async def _fetch_last(b: InProcessBroker) -> Any:
    resp = await b.request(ApiKey.FETCH, 11, fetch_req([(_names()[-1], PER_TOPIC - 1, 0)]))
    return resp.responses[0].partitions[0]


async def _produce_last(b: InProcessBroker, value: bytes) -> Any:
    body = produce_body(_names()[-1], batch([value]), partition=PER_TOPIC - 1)
    return (await b.request(ApiKey.PRODUCE, 8, body)).responses[0].partition_responses[0]


async def test_two_thousand_partitions_listed_served_and_kept_across_a_restart(
    broker: InProcessBroker,
) -> None:
    created = await create(broker, 4, *(spec(n, PER_TOPIC) for n in _names()))
    assert {n: t.error_code for n, t in created.items()} == dict.fromkeys(_names(), ErrorCode.NONE)
    listed = await _listed(broker)
    assert {n: listed[n] for n in _names()} == dict.fromkeys(_names(), PER_TOPIC)

    first = await _produce_last(broker, b"before-restart")
    assert (first.error_code, first.base_offset) == (ErrorCode.NONE, 0)
    got = await _fetch_last(broker)
    assert got.error_code == ErrorCode.NONE and got.high_watermark == 1
    assert b"before-restart" in bytes(got.records)

    broker.restart()
    logs = broker.broker.logs
    assert not any(p.loaded for p in logs.all_logs() if p.topic.startswith("scale-"))
    listed = await _listed(broker)
    assert {n: listed[n] for n in _names()} == dict.fromkeys(_names(), PER_TOPIC)
    got = await _fetch_last(broker)  # read from its files at this first use
    assert got.error_code == ErrorCode.NONE and got.high_watermark == 1
    assert b"before-restart" in bytes(got.records)
    second = await _produce_last(broker, b"after-restart")
    assert (second.error_code, second.base_offset) == (ErrorCode.NONE, 1)

    await logs.run_loader()  # what the running broker does in the background
    assert all(p.loaded for p in logs.all_logs())
    assert await new_producer_id(broker) >= 0
