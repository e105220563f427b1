"""read_committed across Fetch (v4+) and ListOffsets (v2+), over transactions
written through the log.

Fetch: read_committed stops at the last stable offset and lists the aborted
transactions in range; read_uncommitted reads everything; both report the LSO.
ListOffsets: read_committed's latest offset is the LSO and a time lookup finds
nothing at or past it; read_uncommitted and v0-v1 see the high watermark.  What
can fail: records of an open transaction reaching a read_committed reader, an
aborted transaction missing from the list (its records then look committed), the
LSO reported as the high watermark, a waiting read_committed fetch that a marker
does not wake, a read_committed consumer told to start past records it may not
read yet.
"""

from __future__ import annotations

from typing import Any

import pytest
import trio
import trio.testing

from hmb_client.consumer.fetch_records import committed_records
from kproto import ApiKey, ErrorCode
from kproto.records import read_records

from .bodies import batch, fetch_one, fetch_req
from .harness import InProcessBroker, in_background
from .test_list_offsets import list_offsets
from .txn_log import partition_log, txn_batch

A, B = 1000, 2000
BASE = 1_800_000_000_000


async def _scene(broker: InProcessBroker, topic: str) -> None:
    """0 plain, 1-2 A's (aborted at 5), 3 plain, 4 B's (open)."""
    plog = await partition_log(broker, topic)
    await plog.append(txn_batch([b"a1", b"a2"], A, 0))
    await plog.append(batch([b"plain-3"]))
    await plog.append(txn_batch([b"b1"], B, 0))
    assert await plog.append_marker(A, 0, commit=False, coordinator_epoch=0) == 5


@pytest.mark.parametrize("version", [4, 11])
async def test_read_committed_stops_at_the_lso(broker: InProcessBroker, version: int) -> None:
    topic = f"rc-v{version}"
    await _scene(broker, topic)
    p = await fetch_one(broker, topic, 0, version, isolation_level=1)
    assert (p.error_code, p.high_watermark, p.last_stable_offset) == (0, 6, 4)
    assert [(a.producer_id, a.first_offset) for a in p.aborted_transactions] == [(A, 1)]
    assert [r.offset for r in read_records(p.records)] == [0, 1, 2, 3], "nothing at or past the LSO"
    assert [r.value for r in committed_records(p.records, p.aborted_transactions)] == [b"plain-0", b"plain-3"]

    u = await fetch_one(broker, topic, 0, version, isolation_level=0)
    assert (u.high_watermark, u.last_stable_offset, u.aborted_transactions) == (6, 4, [])
    assert [r.value for r in read_records(u.records)] == [b"plain-0", b"a1", b"a2", b"plain-3", b"b1"]

    beyond = await fetch_one(broker, topic, 5, version, isolation_level=1)
    assert (beyond.error_code, beyond.records, beyond.aborted_transactions) == (0, b"", [])


async def test_a_commit_releases_the_records_and_the_abort_stays_listed(broker: InProcessBroker) -> None:
    topic = "rc-commit"
    await _scene(broker, topic)
    plog = broker.broker.logs.get(topic, 0)
    assert plog is not None
    await plog.append_marker(B, 0, commit=True, coordinator_epoch=0)  # 6
    p = await fetch_one(broker, topic, 0, 11, isolation_level=1)
    assert p.last_stable_offset == p.high_watermark == 7
    assert [(a.producer_id, a.first_offset) for a in p.aborted_transactions] == [(A, 1)]
    values = [r.value for r in committed_records(p.records, p.aborted_transactions)]
    assert values == [b"plain-0", b"plain-3", b"b1"]
    after = await fetch_one(broker, topic, 6, 11, isolation_level=1)
    assert after.aborted_transactions == [], "the abort ended before the fetch offset"


async def test_a_waiting_read_committed_fetch_wakes_on_the_marker(broker: InProcessBroker) -> None:
    topic = "rc-wait"
    plog = await partition_log(broker, topic)
    await plog.append(txn_batch([b"t"], A, 0))  # 1, open
    async with trio.open_nursery() as nursery:
        req = fetch_req([(topic, 0, 1)], max_wait_ms=60_000, min_bytes=1, isolation_level=1)
        started = trio.current_time()
        pending = in_background(nursery, lambda: broker.request(ApiKey.FETCH, 11, req))
        await trio.testing.wait_all_tasks_blocked()
        assert not pending.done.is_set(), "nothing is stable yet: the fetch waits"
        await plog.append_marker(A, 0, commit=True, coordinator_epoch=0)
        resp = await pending.result()
        assert trio.current_time() - started < 30, "woken by the marker, not by max_wait_ms"
    p = resp.responses[0].partitions[0]
    assert p.error_code == ErrorCode.NONE and p.last_stable_offset == 3
    assert [r.value for r in read_records(p.records)] == [b"t"]


async def test_latest_is_the_lso_under_read_committed(broker: InProcessBroker) -> None:
    topic = "lo-rc"
    plog = await partition_log(broker, topic)  # 0
    await plog.append(txn_batch([b"t1", b"t2"], A, 0, timestamp=BASE))  # 1-2, open
    for version in (2, 5, 11):
        rc = (await list_offsets(broker, topic, -1, version, isolation_level=1)).topics[0].partitions[0]
        ru = (await list_offsets(broker, topic, -1, version, isolation_level=0)).topics[0].partitions[0]
        assert (rc.error_code, rc.offset, ru.offset) == (0, 1, 3), version
        earliest = await list_offsets(broker, topic, -2, version, isolation_level=1)
        assert earliest.topics[0].partitions[0].offset == 0
    v1 = (await list_offsets(broker, topic, -1, 1)).topics[0].partitions[0]
    assert v1.offset == 3, "v1 has no isolation level: read_uncommitted"

    by_time = (await list_offsets(broker, topic, BASE, 5, isolation_level=1)).topics[0].partitions[0]
    assert (by_time.offset, by_time.timestamp) == (-1, -1), "the record is past the LSO"
    uncommitted = (await list_offsets(broker, topic, BASE, 5, isolation_level=0)).topics[0].partitions[0]
    assert (uncommitted.offset, uncommitted.timestamp) == (1, BASE)

    await plog.append_marker(A, 0, commit=True, coordinator_epoch=0)  # 3
    rc = (await list_offsets(broker, topic, -1, 11, isolation_level=1)).topics[0].partitions[0]
    assert rc.offset == 4
    by_time = (await list_offsets(broker, topic, BASE, 5, isolation_level=1)).topics[0].partitions[0]
    assert (by_time.offset, by_time.timestamp) == (1, BASE)


async def test_the_aborted_list_covers_the_records_returned_not_the_whole_log(make_broker: Any) -> None:
    broker = make_broker("log.index.interval.bytes=1024")
    topic = "rc-bounded"
    plog = await partition_log(broker, topic)  # 0
    for i in range(40):  # producer A+i: 1 KiB, aborted; a plain record between
        await plog.append(txn_batch([b"x" * 1000], A + i, 0))
        await plog.append_marker(A + i, 0, commit=False, coordinator_epoch=0)
        await plog.append(batch([b"kept-%d" % i]))
    p = await fetch_one(broker, topic, 0, 11, isolation_level=1, partition_max_bytes=4000)
    listed = [(a.producer_id, a.first_offset) for a in p.aborted_transactions]
    assert listed[:3] == [(A, 1), (A + 1, 4), (A + 2, 7)]
    assert len(listed) < 10, "bounded by the records returned"
    values = [r.value for r in committed_records(p.records, p.aborted_transactions)]
    assert values and all(v.startswith(b"plain-0") or v.startswith(b"kept-") for v in values)
    assert len(values) >= 3
