"""The movable clock (session expiry, retention) and seeding/snapshotting, with no sleeping."""

from __future__ import annotations

import json
import time
from datetime import timedelta
from pathlib import Path

from wire import WireClient, fetch_body

import kproto
from hmb.embedded import EmbeddedBroker
from kproto import ApiKey, ErrorCode
from kproto.records.default_builder import RecordBatchBuilder


def _join(client: WireClient, group: str, session_timeout_ms: int) -> str:
    body = {
        "group_id": group,
        "session_timeout_ms": session_timeout_ms,
        "rebalance_timeout_ms": session_timeout_ms,
        "member_id": "",
        "protocol_type": "consumer",
        "protocols": [{"name": "range", "metadata": b""}],
    }
    reply = client.request(ApiKey.JOIN_GROUP, 1, body)
    assert reply.error_code == 0
    return str(reply.member_id)


def test_a_member_whose_session_runs_out_is_removed_when_the_clock_moves(
    hmb_fresh_broker: EmbeddedBroker,
) -> None:
    broker = hmb_fresh_broker
    with WireClient(broker.bootstrap_servers) as client:
        member = _join(client, "expiring", session_timeout_ms=30_000)
        assert list(broker.group("expiring")["members"]) == [member]
        broker.advance_clock(timedelta(seconds=29))
        assert list(broker.group("expiring")["members"]) == [member]  # not yet
        broker.advance_clock(timedelta(seconds=2))
        assert broker.group("expiring")["members"] == {}
        reply = client.request(
            ApiKey.HEARTBEAT, 0, {"group_id": "expiring", "generation_id": 1, "member_id": member}
        )
        assert reply.error_code in (ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.ILLEGAL_GENERATION)


def test_retention_deletes_old_segments_when_the_clock_moves() -> None:
    props = {"log.segment.bytes": "1024", "log.retention.hours": "168"}
    with EmbeddedBroker(props) as broker:
        broker.seed([json.dumps({"topic": "old", "partition": 0, "value": "x" * 300}) for _ in range(12)])
        before = broker.watermarks("old")
        assert before == {"log_start_offset": 0, "high_watermark": 12}
        broker.advance_clock(timedelta(days=6))
        assert broker.watermarks("old")["log_start_offset"] == 0  # a week has not passed
        broker.advance_clock(timedelta(days=2))
        after = broker.watermarks("old")
        assert 0 < after["log_start_offset"] <= 12
        assert after["high_watermark"] == 12
        assert broker.records("old")[0]["offset"] == after["log_start_offset"]


def test_commit_timestamps_follow_the_clock(hmb_fresh_broker: EmbeddedBroker) -> None:
    broker = hmb_fresh_broker
    broker.create_topic("t")
    broker.advance_clock(timedelta(days=365))
    broker.seed([json.dumps({"group": "g", "topic": "t", "partition": 0, "offset": 0})])
    store = broker.core.services.offsets  # type: ignore[union-attr]
    committed = store.get("g", "t", 0)
    assert committed is not None
    assert committed.commit_timestamp > broker.core.clock.wall_ms() - 60_000  # type: ignore[union-attr]
    assert broker.core.clock.skew == 365 * 86400  # type: ignore[union-attr]


def test_snapshot_then_seed_rebuilds_the_same_state(hmb_fresh_broker: EmbeddedBroker, tmp_path: Path) -> None:
    src = hmb_fresh_broker
    src.seed(
        [
            json.dumps({"topic": "orders", "partitions": 2}),
            json.dumps(
                {"topic": "orders", "partition": 1, "key": "k", "value": "v", "headers": [["h", "x"]]}
            ),
            json.dumps({"topic": "orders", "partition": 1, "key": None, "value": {"base64": "AAEC"}}),
            json.dumps({"group": "billing", "topic": "orders", "partition": 1, "offset": 1, "metadata": "m"}),
        ]
    )
    path = tmp_path / "state.jsonl"
    lines = src.snapshot(path)
    assert path.read_text().splitlines() == lines
    with EmbeddedBroker() as copy:
        assert copy.seed(path) == {"topics": 1, "records": 2, "commits": 1}
        assert copy.topics()["orders"] == 2
        recs = copy.records("orders", 1)
        assert [(r["key"], r["value"], r["headers"]) for r in recs] == [
            (b"k", b"v", [("h", b"x")]),
            (None, b"\0\1\2", []),
        ]
        assert copy.committed("billing") == {("orders", 1): 1}
        assert copy.snapshot() == lines


def test_a_bad_seed_changes_nothing(hmb_fresh_broker: EmbeddedBroker) -> None:
    broker = hmb_fresh_broker
    good = json.dumps({"topic": "fine", "partitions": 1})
    for bad in ["not json", json.dumps({"topic": "t", "partition": -1}), json.dumps({"nothing": 1})]:
        try:
            broker.seed([good, bad])
        except ValueError as exc:
            assert "seed line 2" in str(exc)
        else:
            raise AssertionError(f"{bad!r} was accepted")
    assert "fine" not in broker.topics()


def test_records_shows_what_was_appended(hmb_fresh_broker: EmbeddedBroker) -> None:
    broker = hmb_fresh_broker
    broker.create_topic("r")
    b = RecordBatchBuilder()
    b.append(b"key", b"value", 1234, [("a", b"1")])
    assert b.build()  # the builder the seed uses makes real batches
    broker.seed(
        [json.dumps({"topic": "r", "partition": 0, "key": "key", "value": "value", "timestamp": 1234})]
    )
    (rec,) = broker.records("r")
    assert (rec["offset"], rec["timestamp"], rec["key"], rec["value"]) == (0, 1234, b"key", b"value")


def test_segment_ms_rolls_the_active_segment_when_the_clock_moves() -> None:
    with EmbeddedBroker({"log.roll.hours": "1"}) as broker:
        line = json.dumps({"topic": "aging", "partition": 0, "value": "x"})
        broker.seed([line])
        broker.advance_clock(timedelta(minutes=59))
        broker.seed([line])
        plog = broker.core.logs.get("aging", 0)  # type: ignore[union-attr]
        assert list(plog.segments) == [0]  # younger than an hour: one segment
        broker.advance_clock(timedelta(minutes=2))
        broker.seed([line])
        assert list(plog.segments) == [0, 2]  # the third record starts a new segment
        assert broker.watermarks("aging")["high_watermark"] == 3


def test_a_long_poll_fetch_ends_when_the_clock_passes_its_max_wait(hmb_fresh_broker: EmbeddedBroker) -> None:
    broker = hmb_fresh_broker
    broker.create_topic("quiet")
    # an hour's wait: only the clock can end it within the test
    fetch = fetch_body("quiet", 0, 0, max_wait_ms=3_600_000, min_bytes=1)
    with WireClient(broker.bootstrap_servers, timeout=30) as client:
        cid = client.send(ApiKey.FETCH, 2, fetch)
        waiting = lambda: any(r["api_name"] == "FETCH" for r in broker.requests())  # noqa: E731
        deadline = time.monotonic() + 10
        while not waiting() and time.monotonic() < deadline:
            time.sleep(0.01)  # bounded wait for the request to arrive
        broker.advance_clock(timedelta(hours=1))
        frame = client.read_frame()
        assert frame is not None
        reply = kproto.decode_response(ApiKey.FETCH, 2, frame)
        assert reply.correlation_id == cid
        assert reply.body.responses[0].partitions[0].error_code == 0
