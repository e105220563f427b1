"""Produce 0-8, Fetch 0-11, ListOffsets 0-5 and InitProducerId 0-1 on the wire, at every
version boundary that changes behaviour, against the real broker process.

What can fail here: a response field missing or wrong at some version (the decoder of
that exact version reads it), records sent as null, RecordBatches reaching a Fetch
v0-v3 client unconverted, the response-wide ``max_bytes`` ignored or a large first batch
withheld, idempotent retries appended twice, producer ids reused after a restart.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from broker_process import BrokerProcess
from wire import WireClient

from kproto import ApiKey, ErrorCode
from kproto.records import (
    Compression,
    RecordBatchBuilder,
    build_message_set,
    read_message_set,
    read_record_batches,
    read_records,
)

PRODUCE, FETCH, LIST_OFFSETS, INIT_PID = (
    ApiKey.PRODUCE,
    ApiKey.FETCH,
    ApiKey.LIST_OFFSETS,
    ApiKey.INIT_PRODUCER_ID,
)


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    """One broker for the tests that each use their own topics."""
    with BrokerProcess(tmp_path_factory.mktemp("modern") / "data") as b:
        yield b


@pytest.fixture
def wc(shared: BrokerProcess) -> Iterator[WireClient]:
    with WireClient(shared.bootstrap) as c:
        yield c


def batch(
    values: list[bytes],
    *,
    timestamps: list[int] | None = None,
    compression: Compression = Compression.NONE,
    producer_id: int = -1,
    epoch: int = -1,
    sequence: int = -1,
    transactional: bool = False,
) -> bytes:
    b = RecordBatchBuilder(compression, producer_id, epoch, sequence, transactional)
    for i, v in enumerate(values):
        b.append(b"key-%d" % i, v, timestamps[i] if timestamps else 1_700_000_000_000 + i, [("h", b"v")])
    return b.build()


def produce(
    c: WireClient, topic: str, records: bytes, version: int = 8, *, partition: int = 0, acks: int = 1
) -> Any:
    c.request(ApiKey.METADATA, 1, {"topics": [{"name": topic}]})  # auto-creates it, as clients do
    body = {
        "transactional_id": None,
        "acks": acks,
        "timeout_ms": 1000,
        "topic_data": [{"name": topic, "partition_data": [{"index": partition, "records": records}]}],
    }
    return c.request(PRODUCE, version, body)


def produce_one(c: WireClient, topic: str, records: bytes, version: int = 8, **kw: Any) -> Any:
    resp = produce(c, topic, records, version, **kw)
    return resp.responses[0].partition_responses[0]


def fetch_req(
    topic_offsets: list[tuple[str, int, int]],
    *,
    max_bytes: int = 50 << 20,
    partition_max_bytes: int = 1 << 20,
    max_wait_ms: int = 0,
    min_bytes: int = 0,
    isolation_level: int = 0,
) -> dict[str, Any]:
    topics: dict[str, list[dict[str, Any]]] = {}
    for topic, partition, offset in topic_offsets:
        topics.setdefault(topic, []).append(
            {
                "partition": partition,
                "current_leader_epoch": -1,
                "fetch_offset": offset,
                "log_start_offset": -1,
                "partition_max_bytes": partition_max_bytes,
            }
        )
    return {
        "replica_id": -1,
        "max_wait_ms": max_wait_ms,
        "min_bytes": min_bytes,
        "max_bytes": max_bytes,
        "isolation_level": isolation_level,
        "session_id": 0,
        "session_epoch": -1,
        "topics": [{"topic": t, "partitions": ps} for t, ps in topics.items()],
        "forgotten_topics_data": [],
        "rack_id": "",
    }


def fetch_one(c: WireClient, topic: str, offset: int, version: int = 11, **kw: Any) -> Any:
    resp = c.request(FETCH, version, fetch_req([(topic, 0, offset)], **kw))
    return resp.responses[0].partitions[0]


def new_producer_id(c: WireClient, version: int = 1) -> int:
    resp = c.request(INIT_PID, version, {"transactional_id": None, "transaction_timeout_ms": 60000})
    assert resp.error_code == ErrorCode.NONE
    assert resp.producer_epoch == 0
    return int(resp.producer_id)


# ------------------------------------------------------------------------ Produce


@pytest.mark.parametrize("version", range(9))
def test_produce_response_fields_per_version(wc: WireClient, version: int) -> None:
    topic = f"prod-v{version}"
    records = (
        batch([b"a", b"b"]) if version >= 3 else build_message_set([(None, b"a"), (None, b"b")], magic=1)
    )
    resp = produce(wc, topic, records, version)
    p = resp.responses[0].partition_responses[0]
    assert (p.index, p.error_code, p.base_offset) == (0, ErrorCode.NONE, 0)
    again = produce_one(wc, topic, records, version)
    assert again.base_offset == 2
    if version >= 1:
        assert resp.throttle_time_ms == 0
    if version >= 2:
        assert p.log_append_time_ms == -1
    else:
        assert "log_append_time_ms" not in p
    if version >= 5:
        assert p.log_start_offset == 0
    else:
        assert "log_start_offset" not in p
    if version >= 8:
        assert list(p.record_errors) == [] and p.error_message is None


def test_produce_magic_rules(wc: WireClient) -> None:
    # magic 2 needs Produce v3+ (Kafka refuses it below: old consumers could not read it)
    assert produce_one(wc, "magic-rules", batch([b"x"]), 2).error_code == ErrorCode.CORRUPT_MESSAGE
    # ... but magic 0/1 is accepted in any version (lenient, like Kafka)
    assert produce_one(wc, "magic-rules", build_message_set([(None, b"m0")]), 8).error_code == 0
    assert produce_one(wc, "magic-rules", build_message_set([(None, b"m1", 5)], magic=1), 0).error_code == 0
    assert produce_one(wc, "magic-rules", batch([b"v2"]), 3).base_offset == 2
    # a corrupted batch CRC is refused, nothing appended
    bad = bytearray(batch([b"crc"]))
    bad[-1] ^= 0xFF
    assert produce_one(wc, "magic-rules", bytes(bad), 8).error_code == ErrorCode.CORRUPT_MESSAGE
    assert produce_one(wc, "magic-rules", batch([b"next"]), 8).base_offset == 3


def test_produce_acks_0_no_response_v8(wc: WireClient) -> None:
    wc.request(ApiKey.METADATA, 1, {"topics": [{"name": "acks0"}]})
    wc.send(PRODUCE, 8, {
        "transactional_id": None, "acks": 0, "timeout_ms": 1000,
        "topic_data": [{"name": "acks0", "partition_data": [{"index": 0, "records": batch([b"q"])}]}],
    })  # fmt: skip
    # the next answer on the connection is the Metadata one: the produce got none
    md = wc.request(ApiKey.METADATA, 1, {"topics": [{"name": "acks0"}]})
    assert md.topics[0].error_code == 0
    assert fetch_one(wc, "acks0", 0).high_watermark == 1


def test_idempotent_retry_acknowledged_with_original_offset(wc: WireClient) -> None:
    topic = "idem-wire"
    pid = new_producer_id(wc)
    produce_one(wc, topic, batch([b"other"]))  # offset 0 from a plain producer
    first = batch([b"a", b"b", b"c"], producer_id=pid, epoch=0, sequence=0)
    r1 = produce_one(wc, topic, first)
    assert (r1.error_code, r1.base_offset) == (0, 1)
    produce_one(wc, topic, batch([b"plain"]))  # offset 4
    r2 = produce_one(wc, topic, first)  # the retry of a batch the broker already has
    assert (r2.error_code, r2.base_offset) == (0, 1)
    assert fetch_one(wc, topic, 0).high_watermark == 5  # not appended again
    r3 = produce_one(wc, topic, batch([b"d"], producer_id=pid, epoch=0, sequence=3))
    assert (r3.error_code, r3.base_offset) == (0, 5)
    gap = produce_one(wc, topic, batch([b"e"], producer_id=pid, epoch=0, sequence=7))
    assert gap.error_code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    values = [r.value for r in read_records(fetch_one(wc, topic, 0).records)]
    assert values == [b"other", b"a", b"b", b"c", b"plain", b"d"]


def test_transactional_batches_refused(wc: WireClient) -> None:
    pid = new_producer_id(wc)
    r = produce_one(
        wc, "txn-refused", batch([b"t"], producer_id=pid, epoch=0, sequence=0, transactional=True)
    )
    assert r.error_code == ErrorCode.INVALID_TXN_STATE
    resp = wc.request(INIT_PID, 0, {"transactional_id": "tx-1", "transaction_timeout_ms": 60000})
    assert resp.error_code == ErrorCode.NOT_COORDINATOR and resp.producer_id == -1


def test_producer_ids_unique_across_restarts(make_broker: Any, tmp_path: Path) -> None:
    b = make_broker(data_dir=tmp_path / "pids")
    seen: list[int] = []
    with WireClient(b.bootstrap) as c:
        seen += [new_producer_id(c, v) for v in (0, 1, 1)]
    b.stop()  # clean
    b.restart()
    with WireClient(b.bootstrap) as c:
        seen += [new_producer_id(c) for _ in range(2)]
    b.kill()  # crash: the reserved block is on disk before any id of it was handed out
    b.restart()
    with WireClient(b.bootstrap) as c:
        seen.append(new_producer_id(c))
    assert len(set(seen)) == len(seen), seen
    assert seen == sorted(seen), seen


def test_producer_id_above_ids_in_the_log_even_without_block_file(make_broker: Any, tmp_path: Path) -> None:
    data = tmp_path / "pid-log"
    b = make_broker(data_dir=data)
    with WireClient(b.bootstrap) as c:
        assert new_producer_id(c) == 0
        produce_one(c, "pid-log", batch([b"x"], producer_id=123_456, epoch=0, sequence=0))
    b.stop()
    (data / "producer-id-block.json").unlink()
    b.restart()
    with WireClient(b.bootstrap) as c:
        assert new_producer_id(c) > 123_456


# ------------------------------------------------------------------------ Fetch


@pytest.mark.parametrize("version", range(12))
def test_fetch_response_fields_per_version(wc: WireClient, version: int) -> None:
    topic = f"fetch-v{version}"
    produce_one(wc, topic, batch([b"one", b"two"]))
    resp = wc.request(FETCH, version, fetch_req([(topic, 0, 0), (topic, 0, 2)]))
    data, empty = resp.responses[0].partitions
    for p in (data, empty):
        assert (p.error_code, p.high_watermark) == (0, 2)
        assert p.records is not None
        if version >= 4:
            assert p.last_stable_offset == 2
            assert p.aborted_transactions == []  # empty, never null (librdkafka reads read_committed)
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


def test_fetch_unknown_and_out_of_range(wc: WireClient) -> None:
    produce_one(wc, "fetch-oor", batch([b"x"]))
    oor = fetch_one(wc, "fetch-oor", 5)
    assert oor.error_code == ErrorCode.OFFSET_OUT_OF_RANGE and oor.records == b""
    assert (oor.high_watermark, oor.log_start_offset) == (1, 0)
    unknown = wc.request(FETCH, 11, fetch_req([("no-such-topic-here", 3, 0)])).responses[0].partitions[0]
    assert unknown.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION and unknown.records == b""


def test_downconversion_is_exact_and_legacy_data_stays_zero_copy(wc: WireClient) -> None:
    topic = "downconv"
    ts = [1_700_000_000_000 + 10 * i for i in range(30)]
    produce_one(wc, topic, build_message_set([(b"k0", b"legacy0"), (None, b"legacy1")], magic=0), 0)
    produce_one(
        wc, topic, batch([b"v%d" % i for i in range(10)], timestamps=ts[:10], compression=Compression.GZIP)
    )
    produce_one(wc, topic, build_message_set([(b"k", b"m1", 1234)], magic=1), 2)
    produce_one(
        wc, topic, batch([b"w%d" % i for i in range(20)], timestamps=ts[10:], compression=Compression.LZ4)
    )
    stored = fetch_one(wc, topic, 0, 11).records  # v4+: as stored
    want = read_records(stored)
    assert [r.offset for r in want] == list(range(33))
    for version, magic in ((0, 0), (1, 0), (2, 1), (3, 1)):
        got = read_message_set(fetch_one(wc, topic, 0, version).records)
        assert max(r.magic for r in got) == magic  # magic 0 messages stay magic 0 for v2/v3
        assert [(r.offset, r.key, r.value) for r in got] == [(r.offset, r.key, r.value) for r in want]
        if magic == 1:
            assert [r.timestamp for r in got[2:12]] == ts[:10]
    # a range holding only MessageSets is sent to old clients exactly as stored
    first = len(build_message_set([(b"k0", b"legacy0")]))
    legacy_only = fetch_one(wc, topic, 0, 0, partition_max_bytes=first)
    assert legacy_only.records == stored[:first]


def test_downconversion_of_a_batch_cut_by_the_v0_size_limit(wc: WireClient) -> None:
    produce_one(wc, "downconv-cut", batch([b"x" * 500 for _ in range(4)]))
    got = read_message_set(fetch_one(wc, "downconv-cut", 0, 0, partition_max_bytes=100).records)
    assert [r.offset for r in got] == [0, 1, 2, 3]  # the whole batch, or the client is stuck


def test_max_bytes_and_the_first_batch_rule(wc: WireClient) -> None:
    big = batch([b"B" * 3000])
    for topic in ("maxb-a", "maxb-b"):
        for _ in range(3):
            produce_one(wc, topic, big)
    size = len(big)
    both = [("maxb-a", 0, 0), ("maxb-b", 0, 0)]
    # v3+: a first batch larger than both limits is still returned whole ...
    resp = wc.request(FETCH, 11, fetch_req(both, max_bytes=100, partition_max_bytes=100))
    a, b = resp.responses[0].partitions + resp.responses[1].partitions
    assert len(a.records) == size and b.records == b""
    assert len(read_record_batches(a.records)) == 1
    # ... and the response-wide limit spans partitions
    resp = wc.request(FETCH, 4, fetch_req(both, max_bytes=size + 10, partition_max_bytes=1 << 20))
    a, b = resp.responses[0].partitions + resp.responses[1].partitions
    assert len(a.records) == size + 10 and b.records == b""
    resp = wc.request(FETCH, 11, fetch_req(both, max_bytes=4 * size, partition_max_bytes=2 * size))
    a, b = resp.responses[0].partitions + resp.responses[1].partitions
    assert (len(a.records), len(b.records)) == (2 * size, 2 * size)
    # v3 has the same rules (its answer is down-converted to magic 1)
    v3 = wc.request(FETCH, 3, fetch_req(both, max_bytes=100, partition_max_bytes=100)).responses
    assert [len(read_message_set(t.partitions[0].records)) for t in v3] == [1, 0]
    # v0-v2 keep the hard per-partition limit (partial data, converted to nothing here)
    v2 = wc.request(FETCH, 2, fetch_req(both, partition_max_bytes=size + size // 2)).responses
    assert [len(read_message_set(t.partitions[0].records)) for t in v2] == [1, 1]


@pytest.mark.parametrize("isolation_level", [0, 1])
def test_isolation_levels_read_everything(wc: WireClient, isolation_level: int) -> None:
    topic = f"iso-{isolation_level}"
    produce_one(wc, topic, batch([b"x", b"y"]))
    p = fetch_one(wc, topic, 0, 11, isolation_level=isolation_level)
    assert [r.value for r in read_records(p.records)] == [b"x", b"y"]
    assert p.last_stable_offset == p.high_watermark == 2


def test_long_poll_wakes_on_append(shared: BrokerProcess, wc: WireClient) -> None:
    topic = "long-poll-modern"
    produce_one(wc, topic, batch([b"first"]))
    result: dict[str, Any] = {}

    def poll() -> None:
        with WireClient(shared.bootstrap, timeout=30) as c:
            started = time.monotonic()
            result["p"] = fetch_one(c, topic, 1, 11, max_wait_ms=20000, min_bytes=1)
            result["elapsed"] = time.monotonic() - started

    t = threading.Thread(target=poll)
    t.start()
    produce_one(wc, topic, batch([b"wake"]))  # before or during the poll: either way it is answered
    t.join(15)
    assert not t.is_alive() and result["elapsed"] < 10  # not the 20 s of max_wait_ms
    assert read_records(result["p"].records)[0].value == b"wake"
    # with nothing new the wait ends at max_wait_ms, with empty records
    started = time.monotonic()
    empty = fetch_one(wc, topic, 2, 11, max_wait_ms=300, min_bytes=1)
    assert empty.error_code == 0 and empty.records == b""
    assert 0.25 < time.monotonic() - started < 5


# ------------------------------------------------------------------------ ListOffsets


def list_offsets(c: WireClient, topic: str, timestamp: int, version: int, partition: int = 0) -> Any:
    body = {
        "replica_id": -1,
        "isolation_level": 1,
        "topics": [
            {
                "name": topic,
                "partitions": [
                    {
                        "partition_index": partition,
                        "current_leader_epoch": -1,
                        "timestamp": timestamp,
                        "max_num_offsets": 1,
                    }
                ],
            }
        ],
    }
    return c.request(LIST_OFFSETS, version, body)


def test_list_offsets_versions(wc: WireClient) -> None:
    topic = "lo-modern"
    base = 1_800_000_000_000
    produce_one(wc, topic, batch([b"a", b"b", b"c"], timestamps=[base, base + 10, base + 20]))
    produce_one(wc, topic, build_message_set([(None, b"m1", base + 30)], magic=1), 2)
    produce_one(
        wc, topic, batch([b"d", b"e"], timestamps=[base + 40, base + 50], compression=Compression.SNAPPY)
    )
    v0 = list_offsets(wc, topic, -1, 0).topics[0].partitions[0]
    assert list(v0.old_style_offsets) == [6]
    for version in range(1, 6):
        resp = list_offsets(wc, topic, -1, version)
        p = resp.topics[0].partitions[0]
        assert (p.error_code, p.offset, p.timestamp) == (0, 6, -1)
        assert list_offsets(wc, topic, -2, version).topics[0].partitions[0].offset == 0
        if version >= 2:
            assert resp.throttle_time_ms == 0
        if version >= 4:
            assert p.leader_epoch == -1
    cases = {
        base - 5: (0, base),
        base: (0, base),
        base + 11: (2, base + 20),
        base + 25: (3, base + 30),
        base + 31: (4, base + 40),
        base + 45: (5, base + 50),
    }
    for target, (offset, ts) in cases.items():
        p = list_offsets(wc, topic, target, 5).topics[0].partitions[0]
        assert (p.error_code, p.offset, p.timestamp) == (0, offset, ts), target
    after = list_offsets(wc, topic, base + 51, 1).topics[0].partitions[0]
    assert (after.error_code, after.offset, after.timestamp) == (0, -1, -1)
    unknown = list_offsets(wc, topic, -1, 5, partition=9).topics[0].partitions[0]
    assert unknown.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_list_offsets_by_time_across_segments(make_broker: Any) -> None:
    b = make_broker("log.segment.bytes=2048")
    base = 1_900_000_000_000
    with WireClient(b.bootstrap) as c:
        for i in range(40):
            produce_one(c, "lo-segs", batch([b"x" * 100], timestamps=[base + i * 1000]))
        assert len(list((b.data_dir / "lo-segs-0").glob("*.log"))) > 3
        for i in (0, 7, 23, 39):
            p = list_offsets(c, "lo-segs", base + i * 1000 - 1, 4).topics[0].partitions[0]
            assert (p.offset, p.timestamp) == (i, base + i * 1000)


def test_downconversion_after_restart_checks_the_bytes(make_broker: Any, tmp_path: Path) -> None:
    """After a clean start a segment vouches only for its tail; older ranges are checked by reading."""
    b = make_broker("log.index.interval.bytes=128", data_dir=tmp_path / "dc-restart")
    with WireClient(b.bootstrap) as c:
        for i in range(20):
            produce_one(c, "dc-restart", batch([b"r%d" % i] * 3))
        produce_one(c, "dc-restart", build_message_set([(None, b"tail")]), 0)
    b.stop()
    b.restart()
    with WireClient(b.bootstrap) as c:
        for version, magic in ((0, 0), (3, 1)):
            got = read_message_set(fetch_one(c, "dc-restart", 0, version).records)
            assert max(r.magic for r in got) == magic
            assert [r.value for r in got] == [b"r%d" % i for i in range(20) for _ in range(3)] + [b"tail"]
