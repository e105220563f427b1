"""DeleteTopics v0-v6 in process: topics and their files gone when the answer leaves.

v1 adds throttle_time_ms; v2 and v3 change nothing the broker answers; v4
is flexible; v5 adds error messages; v6 names topics by name or by id.
What can fail: partition logs left on disk, a deleted name not free again,
the internal offsets topic deleted, a fetch waiting on a deleted partition
until its timeout.
"""

from __future__ import annotations

from typing import Any

import pytest
import trio

from hmb.log.manager import LogManager
from kproto import ApiKey, ErrorCode

from .bodies import batch, create, fetch_req, partitions_of, produce_body, spec
from .harness import InProcessBroker, in_background

DELETE = ApiKey.DELETE_TOPICS


@pytest.fixture
def broker(make_broker: Any) -> InProcessBroker:
    return make_broker("num.partitions=2")


async def delete(b: InProcessBroker, version: int, *names: str) -> dict[str, int]:
    body = {
        "topic_names": list(names),
        "topics": [{"name": n, "topic_id": bytes(16)} for n in names],
        "timeout_ms": 5000,
    }
    resp = await b.request(DELETE, version, body)
    if version >= 1:
        assert resp.throttle_time_ms == 0
    return {r.name: r.error_code for r in resp.responses}


async def produce(b: InProcessBroker, topic: str, value: bytes, partition: int = 0) -> Any:
    resp = await b.request(ApiKey.PRODUCE, 8, produce_body(topic, batch([value]), partition=partition))
    return resp.responses[0].partition_responses[0]


@pytest.mark.parametrize("version", range(7))
async def test_delete_topics_per_version(broker: InProcessBroker, version: int) -> None:
    topic = f"dt{version}"
    assert (await create(broker, 0, spec(topic, 2)))[topic].error_code == 0
    assert (await produce(broker, topic, b"before")).base_offset == 0
    assert await delete(broker, version, topic, f"{topic}-unknown", "__consumer_offsets") == {
        topic: ErrorCode.NONE,
        f"{topic}-unknown": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        "__consumer_offsets": ErrorCode.INVALID_TOPIC_EXCEPTION,
    }
    assert await partitions_of(broker, topic) is None
    assert not [p for p in broker.data_dir.iterdir() if p.name.startswith(f"{topic}-")]
    assert (await produce(broker, topic, b"gone")).error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    # the name is free again: a new, empty topic
    assert (await create(broker, 0, spec(topic, 1)))[topic].error_code == 0
    p = await produce(broker, topic, b"after")
    assert (p.error_code, p.base_offset) == (0, 0)


@pytest.mark.parametrize("version", [5, 6])
async def test_v6_deletes_by_id_and_answers_names_ids_and_messages(
    broker: InProcessBroker, version: int
) -> None:
    await create(broker, 4, spec("by-id", 1))
    topic_id = broker.broker.logs.topic_ids["by-id"]
    stranger = bytes(range(16))
    if version >= 6:
        topics = [{"name": None, "topic_id": topic_id}, {"name": None, "topic_id": stranger}]
    else:
        topics = []
    body = {"topic_names": ["by-id", "nope"], "topics": topics, "timeout_ms": 5000}
    answers = (await broker.request(DELETE, version, body)).responses
    if version >= 6:
        assert [(r.name, r.topic_id, r.error_code) for r in answers] == [
            ("by-id", topic_id, ErrorCode.NONE),
            (None, stranger, ErrorCode.UNKNOWN_TOPIC_ID),
        ]
        assert answers[1].error_message
    else:
        assert [(r.name, r.error_code) for r in answers] == [
            ("by-id", ErrorCode.NONE),
            ("nope", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
        ]
        assert answers[0].error_message is None and answers[1].error_message
    assert await partitions_of(broker, "by-id") is None
    assert topic_id not in broker.broker.logs.topics_by_id


async def test_deleted_topic_stays_deleted_after_a_clean_restart(broker: InProcessBroker) -> None:
    await create(broker, 4, spec("dr-keep", 1), spec("dr-drop", 3))
    await produce(broker, "dr-keep", b"kept")
    assert await delete(broker, 3, "dr-drop") == {"dr-drop": 0}
    broker.restart()
    assert await partitions_of(broker, "dr-drop") is None
    assert await partitions_of(broker, "dr-keep") == 1


async def test_delete_wakes_a_waiting_fetch(broker: InProcessBroker) -> None:
    await create(broker, 4, spec("dt-wait", 1))
    body = fetch_req([("dt-wait", 0, 0)], max_wait_ms=30000, min_bytes=1)
    async with trio.open_nursery() as nursery:
        started = trio.current_time()
        poll = in_background(nursery, lambda: broker.request(ApiKey.FETCH, 11, body))
        await trio.sleep(0.05)
        assert await delete(broker, 3, "dt-wait") == {"dt-wait": 0}  # before or during the wait
        p = (await poll.result()).responses[0].partitions[0]
    assert trio.current_time() - started < 15
    assert p.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


async def test_a_failed_delete_is_a_storage_error(
    broker: InProcessBroker, monkeypatch: pytest.MonkeyPatch
) -> None:
    await create(broker, 4, spec("dt-stuck", 1))

    async def failing(self: LogManager, name: str) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(LogManager, "delete_topic", failing)
    assert await delete(broker, 3, "dt-stuck") == {"dt-stuck": ErrorCode.KAFKA_STORAGE_ERROR}
