"""Incremental fetch sessions (KIP-227) in process: Fetch v7+ with a session id and epoch.

A full fetch with epoch 0 opens a session; each incremental fetch (epoch 1,
2, ...) names only what changed and is answered only with partitions that
have records, an error, or a new high watermark, last stable or log start
offset.  What can fail: a session not opened, an unchanged partition sent
again (or a changed one left out), a wrong epoch or unknown id served, a
forgotten partition still read, the cache growing past its slots.
"""

from __future__ import annotations

from typing import Any

import pytest

from kproto import ApiKey, ErrorCode
from kproto.records import read_records

from .bodies import batch, fetch_req, produce_one
from .harness import InProcessBroker

FETCH = ApiKey.FETCH


def session_req(
    offsets: list[tuple[str, int, int]], session_id: int, epoch: int, forgotten: Any = (), **kw: Any
) -> dict[str, Any]:
    body = fetch_req(offsets, **kw)
    for t in body["topics"]:
        for p in t["partitions"]:
            p["last_fetched_epoch"] = -1  # v12+
    body["session_id"], body["session_epoch"] = session_id, epoch
    body["forgotten_topics_data"] = [{"topic": t, "partitions": list(ps)} for t, ps in forgotten]
    return body


def listed(resp: Any) -> dict[tuple[str, int], list[bytes]]:
    """Each partition the answer lists, with the values of its records."""
    return {
        (t.topic, p.partition_index if "partition_index" in p else p.partition): [
            r.value for r in read_records(p.records or b"")
        ]
        for t in resp.responses
        for p in t.partitions
    }


async def _two_partitions(broker: InProcessBroker) -> None:
    for topic in ("s1", "s2"):
        await produce_one(broker, topic, batch([b"%s-0" % topic.encode()]))


@pytest.mark.parametrize("version", [7, 11, 12])
async def test_a_session_sends_only_what_changed(broker: InProcessBroker, version: int) -> None:
    await _two_partitions(broker)
    full = await broker.request(FETCH, version, session_req([("s1", 0, 0), ("s2", 0, 0)], 0, 0))
    assert full.error_code == ErrorCode.NONE and full.session_id != 0
    assert listed(full) == {("s1", 0): [b"s1-0"], ("s2", 0): [b"s2-0"]}
    sid = full.session_id
    # the client moved both positions on; nothing new since: an empty answer
    quiet = await broker.request(FETCH, version, session_req([("s1", 0, 1), ("s2", 0, 1)], sid, 1))
    assert (quiet.error_code, quiet.session_id, listed(quiet)) == (ErrorCode.NONE, sid, {})
    await produce_one(broker, "s2", batch([b"s2-1"]))
    # nothing named (positions unchanged): only the partition with news is answered
    news = await broker.request(FETCH, version, session_req([], sid, 2))
    assert listed(news) == {("s2", 0): [b"s2-1"]}
    assert news.responses[0].partitions[0].high_watermark == 2


async def test_a_wrong_epoch_or_an_unknown_session_is_refused(broker: InProcessBroker) -> None:
    await _two_partitions(broker)
    sid = (await broker.request(FETCH, 7, session_req([("s1", 0, 0)], 0, 0))).session_id
    wrong = await broker.request(FETCH, 7, session_req([], sid, 5))
    assert (wrong.error_code, wrong.session_id, listed(wrong)) == (
        ErrorCode.INVALID_FETCH_SESSION_EPOCH,
        0,
        {},
    )
    unknown = await broker.request(FETCH, 7, session_req([], sid + 1, 1))
    assert unknown.error_code == ErrorCode.FETCH_SESSION_ID_NOT_FOUND
    assert (await broker.request(FETCH, 7, session_req([], sid, 1))).error_code == ErrorCode.NONE
    assert (await broker.request(FETCH, 7, session_req([], sid, 1))).error_code == (
        ErrorCode.INVALID_FETCH_SESSION_EPOCH  # epoch 1 was answered: 2 is next
    )


async def test_forgotten_partitions_leave_the_session_and_added_ones_join(broker: InProcessBroker) -> None:
    await _two_partitions(broker)
    sid = (await broker.request(FETCH, 7, session_req([("s1", 0, 1)], 0, 0))).session_id
    added = await broker.request(FETCH, 7, session_req([("s2", 0, 0)], sid, 1, forgotten=[("s1", [0])]))
    assert listed(added) == {("s2", 0): [b"s2-0"]}
    await produce_one(broker, "s1", batch([b"s1-1"]))
    later = await broker.request(FETCH, 7, session_req([("s2", 0, 1)], sid, 2))
    assert listed(later) == {}  # s1 was forgotten: its news is not the session's


async def test_the_final_epoch_closes_the_session(broker: InProcessBroker) -> None:
    await _two_partitions(broker)
    sid = (await broker.request(FETCH, 7, session_req([("s1", 0, 0)], 0, 0))).session_id
    last = await broker.request(FETCH, 7, session_req([("s1", 0, 0)], sid, -1))
    assert (last.session_id, listed(last)) == (0, {("s1", 0): [b"s1-0"]})
    assert (await broker.request(FETCH, 7, session_req([], sid, 1))).error_code == (
        ErrorCode.FETCH_SESSION_ID_NOT_FOUND
    )
    sessionless = await broker.request(FETCH, 7, session_req([("s1", 0, 0)], 0, -1))
    assert sessionless.session_id == 0
    assert broker.broker.services.fetch_sessions.created == 1


async def test_sessions_by_topic_id(broker: InProcessBroker) -> None:
    await _two_partitions(broker)
    ids = broker.broker.logs.topic_ids
    body = session_req([("s1", 0, 1), ("s2", 0, 1)], 0, 0)
    for t in body["topics"]:
        t["topic_id"] = ids[t.pop("topic")]
    full = await broker.request(FETCH, 13, body)
    assert [t.topic_id for t in full.responses] == [ids["s1"], ids["s2"]]
    await produce_one(broker, "s2", batch([b"s2-1"]))
    inc = session_req([], full.session_id, 1)
    news = await broker.request(FETCH, 13, inc)
    assert [(t.topic_id, len(t.partitions)) for t in news.responses] == [(ids["s2"], 1)]
    assert (await broker.request(FETCH, 12, inc)).error_code == ErrorCode.INVALID_FETCH_SESSION_EPOCH


async def test_a_full_cache_evicts_only_an_idle_or_a_smaller_session(make_broker: Any) -> None:
    b = make_broker("max.incremental.fetch.session.cache.slots=1")
    await _two_partitions(b)
    first = (await b.request(FETCH, 7, session_req([("s1", 0, 0)], 0, 0))).session_id
    same_size = await b.request(FETCH, 7, session_req([("s2", 0, 0)], 0, 0))
    assert (same_size.session_id, listed(same_size)) == (0, {("s2", 0): [b"s2-0"]})  # served, no session
    bigger = await b.request(FETCH, 7, session_req([("s1", 0, 0), ("s2", 0, 0)], 0, 0))
    assert bigger.session_id not in (0, first)  # took the smaller one's place
    assert (
        await b.request(FETCH, 7, session_req([], first, 1))
    ).error_code == ErrorCode.FETCH_SESSION_ID_NOT_FOUND
    b.broker.clock.advance(121)  # idle past the eviction time: any newcomer may take its place
    assert (await b.request(FETCH, 7, session_req([("s1", 0, 0)], 0, 0))).session_id != 0
    assert len(b.broker.services.fetch_sessions.sessions) == 1
