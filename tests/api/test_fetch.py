"""Fetch v0-v18 in process: every version boundary, the size limits, down-conversion, long polls.

v1 adds throttle_time_ms; v0-v1 clients read magic 0 and v2-v3 magic 1 only
(RecordBatches are down-converted for them); v3 adds the response-wide
max_bytes and the "first batch whole" rule; v4 isolation level, last stable
offset and aborted transactions; v5 log_start_offset; v7 fetch sessions
(always "no session" here); v11 the preferred read replica; v12 flexible,
with a partition's ``last_fetched_epoch`` checked against the log's leader
epochs (a reader whose epoch ended before its position gets no records but
the tagged ``diverging_epoch``); v13+ topics by id, an unknown or stale id
UNKNOWN_TOPIC_ID; v14-v18 answer as v13.  What can fail: a field missing at
some version, RecordBatches reaching an old client unconverted, a limit
ignored or a large first batch withheld, a long poll that sleeps instead of
waking on an append, a topic answered under its name where the client sent
an id, records handed to a reader that must truncate first, a stale id
reading the new topic.
"""

from __future__ import annotations

from typing import Any

import pytest
import trio

from hmb.api import HANDLERS
from kproto import ApiKey, ErrorCode
from kproto.records import Compression, build_message_set, read_message_set, read_record_batches, read_records

from .bodies import batch, create, fetch_one, fetch_req, produce_one, spec
from .harness import InProcessBroker, in_background, response_bytes

FETCH = ApiKey.FETCH
FLEXIBLE = range(12, 19)


@pytest.mark.parametrize("version", range(12))
async def test_fetch_response_fields_per_version(broker: InProcessBroker, version: int) -> None:
    topic = f"fetch-v{version}"
    await produce_one(broker, topic, batch([b"one", b"two"]))
    resp = await broker.request(FETCH, version, fetch_req([(topic, 0, 0), (topic, 0, 2)]))
    data, empty = resp.responses[0].partitions
    for p in (data, empty):
        assert (p.error_code, p.high_watermark) == (0, 2)
        assert p.records is not None
        if version >= 4:
            assert p.last_stable_offset == 2
            assert p.aborted_transactions == []  # empty, never null: librdkafka reads read_committed
        if version >= 5:
            assert p.log_start_offset == 0
        if version >= 11:
            assert p.preferred_read_replica == -1
    assert empty.records == b""
    if version >= 1:
        assert resp.throttle_time_ms == 0
    if version >= 7:
        assert (resp.error_code, resp.session_id) == (0, 0)
    expected_magic = 0 if version <= 1 else 1 if version <= 3 else 2
    assert data.records[16] == expected_magic
    assert [(r.offset, r.key, r.value) for r in read_records(data.records)] == [
        (0, b"key-0", b"one"),
        (1, b"key-1", b"two"),
    ]


async def test_fetch_unknown_and_out_of_range(broker: InProcessBroker) -> None:
    await produce_one(broker, "fetch-oor", batch([b"x"]))
    oor = await fetch_one(broker, "fetch-oor", 5)
    assert oor.error_code == ErrorCode.OFFSET_OUT_OF_RANGE and oor.records == b""
    assert (oor.high_watermark, oor.log_start_offset) == (1, 0)
    resp = await broker.request(FETCH, 11, fetch_req([("no-such-topic-here", 3, 0)]))
    unknown = resp.responses[0].partitions[0]
    assert unknown.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION and unknown.records == b""


async def test_downconversion_is_exact_and_legacy_data_stays_zero_copy(broker: InProcessBroker) -> None:
    topic = "downconv"
    ts = [1_700_000_000_000 + 10 * i for i in range(30)]
    await produce_one(broker, topic, build_message_set([(b"k0", b"legacy0"), (None, b"legacy1")], magic=0), 0)
    await produce_one(
        broker,
        topic,
        batch([b"v%d" % i for i in range(10)], timestamps=ts[:10], compression=Compression.GZIP),
    )
    await produce_one(broker, topic, build_message_set([(b"k", b"m1", 1234)], magic=1), 2)
    await produce_one(
        broker, topic, batch([b"w%d" % i for i in range(20)], timestamps=ts[10:], compression=Compression.LZ4)
    )
    stored = (await fetch_one(broker, topic, 0, 11)).records  # v4+: as stored
    want = read_records(stored)
    assert [r.offset for r in want] == list(range(33))
    for version, magic in ((0, 0), (1, 0), (2, 1), (3, 1)):
        got = read_message_set((await fetch_one(broker, topic, 0, version)).records)
        assert max(r.magic for r in got) == magic  # magic 0 messages stay magic 0 for v2/v3
        assert [(r.offset, r.key, r.value) for r in got] == [(r.offset, r.key, r.value) for r in want]
        if magic == 1:
            assert [r.timestamp for r in got[2:12]] == ts[:10]
    # a range holding only MessageSets is sent to old clients exactly as stored
    first = len(build_message_set([(b"k0", b"legacy0")]))
    legacy_only = await fetch_one(broker, topic, 0, 0, partition_max_bytes=first)
    assert legacy_only.records == stored[:first]


async def test_downconversion_of_a_batch_cut_by_the_v0_size_limit(broker: InProcessBroker) -> None:
    await produce_one(broker, "downconv-cut", batch([b"x" * 500 for _ in range(4)]))
    cut = await fetch_one(broker, "downconv-cut", 0, 0, partition_max_bytes=100)
    assert [r.offset for r in read_message_set(cut.records)] == [0, 1, 2, 3]  # whole, or the client is stuck


async def test_downconversion_after_restart_checks_the_bytes(make_broker: Any) -> None:
    """After a clean start a segment vouches only for its tail; older ranges are checked by reading."""
    b = make_broker("log.index.interval.bytes=128")
    for i in range(20):
        await produce_one(b, "dc-restart", batch([b"r%d" % i] * 3))
    await produce_one(b, "dc-restart", build_message_set([(None, b"tail")]), 0)
    b.restart()
    for version, magic in ((0, 0), (3, 1)):
        got = read_message_set((await fetch_one(b, "dc-restart", 0, version)).records)
        assert max(r.magic for r in got) == magic
        assert [r.value for r in got] == [b"r%d" % i for i in range(20) for _ in range(3)] + [b"tail"]


async def test_max_bytes_and_the_first_batch_rule(broker: InProcessBroker) -> None:
    big = batch([b"B" * 3000])
    for topic in ("maxb-a", "maxb-b"):
        for _ in range(3):
            await produce_one(broker, topic, big)
    size = len(big)
    both = [("maxb-a", 0, 0), ("maxb-b", 0, 0)]
    # v3+: a first batch larger than both limits is still returned whole ...
    resp = await broker.request(FETCH, 11, fetch_req(both, max_bytes=100, partition_max_bytes=100))
    a, b = resp.responses[0].partitions + resp.responses[1].partitions
    assert len(a.records) == size and b.records == b""
    assert len(read_record_batches(a.records)) == 1
    # ... and the response-wide limit spans partitions
    resp = await broker.request(FETCH, 4, fetch_req(both, max_bytes=size + 10, partition_max_bytes=1 << 20))
    a, b = resp.responses[0].partitions + resp.responses[1].partitions
    assert len(a.records) == size + 10 and b.records == b""
    resp = await broker.request(FETCH, 11, fetch_req(both, max_bytes=4 * size, partition_max_bytes=2 * size))
    a, b = resp.responses[0].partitions + resp.responses[1].partitions
    assert (len(a.records), len(b.records)) == (2 * size, 2 * size)
    # v3 has the same rules (its answer is down-converted to magic 1)
    v3 = (await broker.request(FETCH, 3, fetch_req(both, max_bytes=100, partition_max_bytes=100))).responses
    assert [len(read_message_set(t.partitions[0].records)) for t in v3] == [1, 0]
    # v0-v2 keep the hard per-partition limit (partial data, converted to nothing here)
    v2 = (await broker.request(FETCH, 2, fetch_req(both, partition_max_bytes=size + size // 2))).responses
    assert [len(read_message_set(t.partitions[0].records)) for t in v2] == [1, 1]


@pytest.mark.parametrize("isolation_level", [0, 1])
async def test_isolation_levels_read_everything(broker: InProcessBroker, isolation_level: int) -> None:
    topic = f"iso-{isolation_level}"
    await produce_one(broker, topic, batch([b"x", b"y"]))
    p = await fetch_one(broker, topic, 0, 11, isolation_level=isolation_level)
    assert [r.value for r in read_records(p.records)] == [b"x", b"y"]
    assert p.last_stable_offset == p.high_watermark == 2


async def test_long_poll_wakes_on_append(broker: InProcessBroker) -> None:
    topic = "long-poll-modern"
    await produce_one(broker, topic, batch([b"first"]))
    async with trio.open_nursery() as nursery:
        started = trio.current_time()
        poll = in_background(nursery, lambda: fetch_one(broker, topic, 1, 11, max_wait_ms=20000, min_bytes=1))
        await trio.sleep(0.05)  # the poll is waiting now (before or during: either way it is answered)
        await produce_one(broker, topic, batch([b"wake"]))
        p = await poll.result()
        assert trio.current_time() - started < 10  # not the 20 s of max_wait_ms
    assert read_records(p.records)[0].value == b"wake"
    # with nothing new the wait ends at max_wait_ms, with empty records
    started = trio.current_time()
    empty = await fetch_one(broker, topic, 2, 11, max_wait_ms=300, min_bytes=1)
    assert empty.error_code == 0 and empty.records == b""
    assert 0.25 < trio.current_time() - started < 5


async def test_a_long_poll_ends_when_its_client_is_gone(broker: InProcessBroker) -> None:
    """The session's client_gone event ends the wait at once (the network layer sets it on EOF)."""
    from hmb.api.context import Session

    await produce_one(broker, "gone", batch([b"x"]))
    session = Session("127.0.0.1:1")
    async with trio.open_nursery() as nursery:
        started = trio.current_time()
        poll = in_background(
            nursery,
            lambda: broker.request(
                FETCH, 11, fetch_req([("gone", 0, 1)], max_wait_ms=30000, min_bytes=1), session=session
            ),
        )
        await trio.sleep(0.05)
        session.client_gone.set()
        await poll.result()
        assert trio.current_time() - started < 5


# ---------------------------------------------------------------- v12+: flexible, topic ids


def flexible_req(
    version: int, topic: str | bytes, offset: int, last_fetched_epoch: int = -1
) -> dict[str, Any]:
    """A v12+ request for partition 0 of ``topic`` (a name up to v12, an id from v13)."""
    body = fetch_req([("unused", 0, offset)])
    [t] = body["topics"]
    t["partitions"][0]["last_fetched_epoch"] = last_fetched_epoch
    t.pop("topic")
    t["topic" if version < 13 else "topic_id"] = topic
    if version >= 15:
        del body["replica_id"]  # a consumer's replica_state is the tagged default
    return body


def topic_id(b: InProcessBroker, topic: str) -> bytes:
    return b.broker.logs.topic_ids[topic]


def test_served_up_to_v18() -> None:
    assert (HANDLERS[FETCH].min_version, HANDLERS[FETCH].max_version) == (0, 18)


@pytest.mark.parametrize("version", FLEXIBLE)
async def test_flexible_versions_read_by_name_then_by_id(broker: InProcessBroker, version: int) -> None:
    topic = f"flex-v{version}"
    await produce_one(broker, topic, batch([b"one", b"two"]))
    key: str | bytes = topic if version < 13 else topic_id(broker, topic)
    resp = await broker.request(FETCH, version, flexible_req(version, key, 0))
    assert (resp.throttle_time_ms, resp.error_code, resp.session_id) == (0, 0, 0)
    [t] = resp.responses
    assert (t.topic if version < 13 else t.topic_id) == key
    [p] = t.partitions
    assert (p.error_code, p.high_watermark, p.last_stable_offset, p.log_start_offset) == (0, 2, 2, 0)
    assert (p.aborted_transactions, p.preferred_read_replica) == ([], -1)
    assert (p.tagged_fields["diverging_epoch"].epoch, p.tagged_fields["diverging_epoch"].end_offset) == (
        -1,
        -1,
    )
    assert [(r.offset, r.value) for r in read_records(p.records)] == [(0, b"one"), (1, b"two")]
    if version >= 16:
        assert resp.tagged_fields["node_endpoints"] == []


async def test_an_unknown_or_stale_topic_id_reads_nothing(broker: InProcessBroker) -> None:
    resp = await broker.request(FETCH, 13, flexible_req(13, b"\x05" * 16, 0))
    [p] = resp.responses[0].partitions
    assert (resp.responses[0].topic_id, p.error_code, p.records) == (
        b"\x05" * 16,
        ErrorCode.UNKNOWN_TOPIC_ID,
        b"",
    )
    await create(broker, 4, spec("reborn", 1))
    old = topic_id(broker, "reborn")
    deleted = await broker.request(ApiKey.DELETE_TOPICS, 4, {"topic_names": ["reborn"], "timeout_ms": 1000})
    assert deleted.responses[0].error_code == 0
    await create(broker, 4, spec("reborn", 1))
    await produce_one(broker, "reborn", batch([b"new"]))
    assert topic_id(broker, "reborn") != old
    resp = await broker.request(FETCH, 17, flexible_req(17, old, 0))
    assert resp.responses[0].partitions[0].error_code == ErrorCode.UNKNOWN_TOPIC_ID
    resp = await broker.request(FETCH, 17, flexible_req(17, topic_id(broker, "reborn"), 0))
    assert [r.value for r in read_records(resp.responses[0].partitions[0].records)] == [b"new"]


async def test_a_reader_past_the_end_of_its_epoch_is_told_where_it_diverged(broker: InProcessBroker) -> None:
    await produce_one(broker, "diverge", batch([b"a", b"b", b"c", b"d", b"e", b"f"]))
    plog = broker.broker.logs.get("diverge", 0)
    assert plog is not None
    plog.epochs.assign(2, 4)  # a new leader's epoch 2 began at offset 4; epoch 1 never wrote here

    async def fetch(offset: int, last_fetched_epoch: int) -> Any:
        resp = await broker.request(FETCH, 12, flexible_req(12, "diverge", offset, last_fetched_epoch))
        return resp.responses[0].partitions[0]

    p = await fetch(5, 1)  # read epoch 1 up to offset 5: epoch 0 (the latest <= 1) ended at 4
    assert p.error_code == 0 and p.records == b""
    assert (p.tagged_fields["diverging_epoch"].epoch, p.tagged_fields["diverging_epoch"].end_offset) == (0, 4)
    p = await fetch(7, 2)  # the current epoch, past the log end: it ends at 6
    assert (p.tagged_fields["diverging_epoch"].epoch, p.tagged_fields["diverging_epoch"].end_offset) == (2, 6)
    for offset, epoch in ((4, 0), (5, 2), (0, -1), (3, 9)):  # in step, no epoch, an epoch newer than the log
        p = await fetch(offset, epoch)
        assert p.tagged_fields["diverging_epoch"].epoch == -1, (offset, epoch)
        assert offset in [r.offset for r in read_records(p.records)]  # the batch that holds it


async def test_a_later_partition_whose_first_entry_the_limit_cuts_gets_no_records(
    broker: InProcessBroker,
) -> None:
    """v3+: bytes with no complete record would stop a client ("failed to make progress")."""
    await produce_one(broker, "cut-a", batch([b"a" * 200]))
    await produce_one(broker, "cut-b", batch([b"b" * 200]))
    first = await broker.request(FETCH, 4, fetch_req([("cut-a", 0, 0)]))
    size = len(first.responses[0].partitions[0].records)
    resp = await broker.request(FETCH, 4, fetch_req([("cut-a", 0, 0), ("cut-b", 0, 0)], max_bytes=size + 50))
    a, b = (t.partitions[0] for t in resp.responses)
    assert [r.value for r in read_records(a.records)] == [b"a" * 200]
    assert (b.error_code, b.high_watermark, len(b.records)) == (0, 1, 0)


# ---------------------------------------------------------------- many partitions: what one Fetch holds


def _tasks(task: trio.lowlevel.Task | None = None) -> int:
    """How many tasks run under ``task`` (the root task: all of them), itself included."""
    task = task or trio.lowlevel.current_root_task()
    return 1 + sum(_tasks(child) for nursery in task.child_nurseries for child in nursery.child_tasks)


async def test_a_long_poll_over_many_partitions_waits_in_a_few_tasks(broker: InProcessBroker) -> None:
    """One event for all the partitions read: no task per partition while it waits (a Fetch of
    3,000 partitions that did so raised the broker's memory by 11 MB), nothing left behind after."""
    n = 200
    await create(broker, 5, spec("wide", n))
    req = fetch_req([("wide", p, 0) for p in range(n)], max_wait_ms=30000, min_bytes=1)
    async with trio.open_nursery() as nursery:
        before = _tasks()
        poll = in_background(nursery, lambda: broker.request(FETCH, 11, req))
        await trio.testing.wait_all_tasks_blocked()
        waiting = _tasks() - before
        assert waiting < 10, f"{waiting} tasks for one Fetch of {n} partitions"
        await produce_one(broker, "wide", batch([b"last"]), partition=n - 1)
        resp = await poll.result()
    got = {p.partition_index: read_records(p.records) for p in resp.responses[0].partitions if p.records}
    assert list(got) == [n - 1] and [r.value for r in got[n - 1]] == [b"last"]
    logs = broker.broker.logs
    left = [p for p in range(n) if logs.get("wide", p)._waiters is not None]
    assert left == [], "partitions still hold the finished poll's event"


async def test_a_fetch_holds_its_segments_until_its_answer_is_sent(broker: InProcessBroker) -> None:
    """Each region read keeps its segment's file open (pinned) until the network layer has
    sent the answer and closed its resources; then every pin is let go, once."""
    from hmb.api.context import Session

    await create(broker, 5, spec("held", 3))
    for p in range(3):
        await produce_one(broker, "held", batch([b"v%d" % p]), partition=p)
    segments = [broker.broker.logs.get("held", p).active for p in range(3)]
    frame = broker.encode(FETCH, 11, fetch_req([("held", p, 0) for p in range(3)]))
    outcome = await broker.broker.dispatcher.dispatch(frame, Session("127.0.0.1:1"))
    assert [seg._pins for seg in segments] == [1, 1, 1], "a region in an unsent answer is not pinned"
    assert response_bytes(outcome) is not None
    assert [seg._pins for seg in segments] == [0, 0, 0], "a sent answer still pins its segments"
