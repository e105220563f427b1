"""Every kind of bad input, against the real broker process.

Each test sends something wrong and checks two things:

* the specific outcome: a Kafka error code in the response, or the
  connection closed by the broker with its reason in the broker's log;
* isolation: a well-behaved connection opened *before* the bad input
  (:class:`Healthy`) is still served afterwards, and everything the broker
  acknowledged before is still there, byte for byte.

Brokers are shared per module where tests do not interfere (each test uses
its own topic); settings that change behaviour get a broker of their own.

Where a test must know that the broker itself (not only its kernel) has
read or dropped a connection, it looks at ``/proc/net/tcp`` (receive and
send queues of both ends) and ``/proc/<pid>/fd``: waiting on a condition,
never sleeping for a guessed time.
"""

from __future__ import annotations

import os
import random
import re
import select
import socket
import struct
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from broker_process import BrokerProcess
from hypothesis import given, settings
from hypothesis import strategies as st
from wire import WireClient, fetch_body, metadata_body, produce_body

import kproto
from kproto import ApiKey, ErrorCode
from kproto.records import Compression, build_message_set, read_message_set

PRODUCE, FETCH, LIST_OFFSETS, METADATA = ApiKey.PRODUCE, ApiKey.FETCH, ApiKey.LIST_OFFSETS, ApiKey.METADATA
OFFSET_COMMIT, OFFSET_FETCH = ApiKey.OFFSET_COMMIT, ApiKey.OFFSET_FETCH
INT32_MAX = 2**31 - 1
OUT_OF_RANGE = ErrorCode.OFFSET_OUT_OF_RANGE

# --------------------------------------------------------------------------- helpers


def peer(client: WireClient | socket.socket) -> str:
    """How the broker names this connection in its log: our local address."""
    sock = client.sock if isinstance(client, WireClient) else client
    host, port = sock.getsockname()[:2]
    return f"{host}:{port}"


def closing_reason(broker: BrokerProcess, client: WireClient | socket.socket) -> str:
    """The reason the broker logged (WARNING) for closing this connection."""
    rx = rf" WARNING hmb\.net\.connection: closing connection from {re.escape(peer(client))}: (.*)$"
    return broker.wait_for_log(rx).group(1)


def expect_closed(client: WireClient) -> None:
    """The broker closes the connection without answering (bounded by the socket timeout)."""
    try:
        frame = client.read_frame()
    except ConnectionResetError:
        return
    assert frame is None, f"expected the broker to close the connection, got a {len(frame)}-byte frame"


def wait_until(condition: Callable[[], bool], what: str, timeout: float = 10.0) -> None:
    """Poll ``condition`` until true (a bounded wait on a condition, not a sleep)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting until {what}")
        time.sleep(0.005)


def raw_frame(
    api_key: int,
    version: int,
    correlation_id: int,
    body: bytes,
    client_id: bytes = b"bad",
) -> bytes:
    """A request frame built by hand (any key/version, any body), header v1."""
    header = struct.pack(">hhih", api_key, version, correlation_id, len(client_id)) + client_id
    return kproto.add_prefix(header + body)


def produce_response(client: WireClient, topic: str, partition: int, records: bytes, acks: int = 1) -> Any:
    resp = client.request(PRODUCE, 0, produce_body(topic, partition, records, acks=acks))
    return resp.responses[0].partition_responses[0]


def create_topic(client: WireClient, topic: str) -> None:
    """Topics are created by asking for them (auto.create.topics.enable), never by producing."""
    md = client.request(METADATA, 0, metadata_body(topic))
    assert md.topics[0].error_code == ErrorCode.NONE, ErrorCode(md.topics[0].error_code).name


def produce_ok(
    client: WireClient,
    topic: str,
    values: list[bytes],
    partition: int = 0,
    magic: int = 0,
) -> int:
    records = build_message_set([(None, v) for v in values], magic=magic)
    p = produce_response(client, topic, partition, records)
    assert p.error_code == ErrorCode.NONE, ErrorCode(p.error_code).name
    return int(p.base_offset)


def fetch_partition(client: WireClient, topic: str, offset: int, partition: int = 0, **kw: Any) -> Any:
    return client.request(FETCH, 0, fetch_body(topic, partition, offset, **kw)).responses[0].partitions[0]


def fetch_all(
    client: WireClient,
    topic: str,
    partition: int = 0,
    offset: int = 0,
) -> list[tuple[int, bytes | None]]:
    """Every (offset, value) from ``offset`` to the high watermark."""
    out: list[tuple[int, bytes | None]] = []
    while True:
        p = fetch_partition(client, topic, offset, partition)
        assert p.error_code == ErrorCode.NONE, ErrorCode(p.error_code).name
        records = [r for r in read_message_set(p.records) if r.offset >= offset]
        out += [(r.offset, r.value) for r in records]
        if not records or records[-1].offset + 1 >= p.high_watermark:
            return out
        offset = records[-1].offset + 1


def high_watermark(client: WireClient, topic: str, partition: int = 0) -> int:
    p = fetch_partition(client, topic, 0, partition, max_bytes=0)
    assert p.error_code == ErrorCode.NONE, ErrorCode(p.error_code).name
    return int(p.high_watermark)


def list_offsets(
    client: WireClient,
    topic: str,
    timestamp: int,
    partition: int = 0,
    max_num: int = 10,
) -> Any:
    body = {
        "replica_id": -1,
        "topics": [
            {
                "name": topic,
                "partitions": [
                    {"partition_index": partition, "timestamp": timestamp, "max_num_offsets": max_num}
                ],
            }
        ],
    }
    return client.request(LIST_OFFSETS, 0, body).topics[0].partitions[0]


def commit_body(
    group: str,
    topic: str,
    partition: int,
    offset: int,
    metadata: str | None = "",
) -> dict[str, Any]:
    partitions = [
        {
            "partition_index": partition,
            "committed_offset": offset,
            "commit_timestamp": -1,
            "committed_metadata": metadata,
        }
    ]
    return {
        "group_id": group,
        "generation_id": -1,
        "member_id": "",
        "topics": [{"name": topic, "partitions": partitions}],
    }


def offset_fetch(client: WireClient, group: str, topic: str, partition: int = 0, version: int = 1) -> Any:
    body = {"group_id": group, "topics": [{"name": topic, "partition_indexes": [partition]}]}
    return client.request(OFFSET_FETCH, version, body).topics[0].partitions[0]


def topic_for(request: pytest.FixtureRequest) -> str:
    return re.sub(r"[^a-zA-Z0-9._-]", "_", request.node.name)[:200]


def drain(sock: socket.socket) -> bytes:
    """Everything the peer sends until it closes (or resets) the connection."""
    out = bytearray()
    while True:
        try:
            data = sock.recv(1 << 16)
        except ConnectionResetError:
            return bytes(out)
        if not data:
            return bytes(out)
        out += data


# ---------------------------------------------------------------------------- /proc


@dataclass(frozen=True)
class TcpRow:
    tx_queue: int
    rx_queue: int
    inode: int


def tcp_table() -> dict[tuple[int, int], TcpRow]:
    """(local port, remote port) -> queues and inode of every IPv4 loopback TCP socket."""
    try:
        text = Path("/proc/net/tcp").read_text()
    except OSError:
        pytest.skip("needs /proc/net/tcp (Linux) to observe what the broker has read")
    rows = {}
    for line in text.splitlines()[1:]:
        f = line.split()
        (lip, lport), (rip, rport) = (a.split(":") for a in (f[1], f[2]))
        if lip != "0100007F" or rip != "0100007F":
            continue
        tx, rx = (int(q, 16) for q in f[4].split(":"))
        rows[(int(lport, 16), int(rport, 16))] = TcpRow(tx, rx, int(f[9]))
    return rows


def broker_side(broker: BrokerProcess, sock: socket.socket) -> TcpRow | None:
    return tcp_table().get((broker.port, sock.getsockname()[1]))


def wait_broker_read_everything(broker: BrokerProcess, sock: socket.socket) -> None:
    """Until the broker *process* has read every byte we sent (not only its kernel)."""
    ours = sock.getsockname()[1]

    def done() -> bool:
        table = tcp_table()
        mine, theirs = table.get((ours, broker.port)), table.get((broker.port, ours))
        return mine is not None and theirs is not None and mine.tx_queue == 0 and theirs.rx_queue == 0

    wait_until(done, "the broker has read the request")


def broker_holds_socket(broker: BrokerProcess, inode: int) -> bool:
    assert broker.proc is not None
    fd_dir = Path(f"/proc/{broker.proc.pid}/fd")
    target = f"socket:[{inode}]"
    for fd in fd_dir.iterdir():
        try:
            if os.readlink(fd) == target:
                return True
        except OSError:
            continue
    return False


# -------------------------------------------------------------------- the healthy one


class Healthy:
    """A well-behaved client, connected before the bad input, with acknowledged data.

    ``check()`` proves isolation: the broker process runs, this connection is
    served (Metadata, Produce, Fetch), every value acknowledged so far comes
    back at its offset, and the broker logged no ERROR since this was made.
    """

    def __init__(self, broker: BrokerProcess, topic: str) -> None:
        self.broker = broker
        self.topic = topic
        self.log_mark = len(broker.lines)
        self.client = WireClient(broker.bootstrap)
        md = self.client.request(METADATA, 0, metadata_body(topic))
        assert md.topics[0].error_code == ErrorCode.NONE, ErrorCode(md.topics[0].error_code).name
        self.records = fetch_all(self.client, topic)
        self.produce(b"acked before the bad input", b"and another one")

    def produce(self, *values: bytes) -> None:
        base = produce_ok(self.client, self.topic, list(values))
        assert base == len(self.records), "offsets must continue where the log ended"
        self.records += [(base + i, v) for i, v in enumerate(values)]

    def check(self) -> None:
        assert self.broker.alive(), "the broker process died"
        md = self.client.request(METADATA, 0, metadata_body(self.topic))
        assert md.topics[0].error_code == ErrorCode.NONE
        self.produce(f"acked after the bad input #{len(self.records)}".encode())
        assert fetch_all(self.client, self.topic) == self.records
        new_lines = self.broker.lines[self.log_mark :]
        bad = [line for line in new_lines if " ERROR " in line or "Traceback" in line]
        assert not bad, "the broker logged errors:\n" + "".join(new_lines[-40:])

    def close(self) -> None:
        self.client.close()

    def __enter__(self) -> Healthy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# ---------------------------------------------------------------------------- brokers


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    """Default settings; tests keep out of each other's way by using their own topics."""
    with BrokerProcess(tmp_path_factory.mktemp("shared") / "data") as b:
        yield b


@pytest.fixture
def healthy(shared: BrokerProcess, request: pytest.FixtureRequest) -> Iterator[Healthy]:
    with Healthy(shared, "healthy." + topic_for(request)) as h:
        yield h


@pytest.fixture(scope="module")
def no_auto_create(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    """auto.create.topics.enable=false, with one topic made beforehand (for the healthy client)."""
    data = tmp_path_factory.mktemp("noauto") / "data"
    with BrokerProcess(data) as b, WireClient(b.bootstrap) as c:
        c.request(METADATA, 0, metadata_body("existing"))
        b.stop()
    with BrokerProcess(data, "auto.create.topics.enable=false") as b:
        yield b


@pytest.fixture(scope="module")
def small_messages(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    with BrokerProcess(tmp_path_factory.mktemp("msgmax") / "data", "message.max.bytes=1000") as b:
        yield b


@pytest.fixture(scope="module")
def small_requests(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    with BrokerProcess(tmp_path_factory.mktemp("reqmax") / "data", "socket.request.max.bytes=2048") as b:
        yield b


@pytest.fixture(scope="module")
def short_retention(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    """Every closed segment is deleted at once: the log start moves above 0."""
    overrides = ("log.segment.bytes=1024", "log.retention.bytes=1", "log.retention.check.interval.ms=50")
    with BrokerProcess(tmp_path_factory.mktemp("retention") / "data", *overrides) as b:
        yield b


# ====================================================================== 1. unknown topic


def test_unknown_topic_without_auto_create(no_auto_create: BrokerProcess) -> None:
    b = no_auto_create
    before = set(os.listdir(b.data_dir))
    with Healthy(b, "existing") as h, WireClient(b.bootstrap) as bad:
        p = produce_response(bad, "nope", 0, build_message_set([(None, b"lost")]))
        assert (p.error_code, p.base_offset) == (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1)

        md = bad.request(METADATA, 0, metadata_body("nope", "existing"))
        errors = {t.name: (t.error_code, len(t.partitions)) for t in md.topics}
        assert errors == {"nope": (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 0), "existing": (ErrorCode.NONE, 1)}

        assert fetch_partition(bad, "nope", 0).error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        lo = list_offsets(bad, "nope", -1)
        assert (lo.error_code, list(lo.old_style_offsets)) == (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, [])
        # an unknown partition of a known topic is unknown too
        p = produce_response(bad, "existing", 7, build_message_set([(None, b"lost")]))
        assert p.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        # asking did not create it
        md = bad.request(METADATA, 0, metadata_body("nope"))
        assert md.topics[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        h.check()
    assert set(os.listdir(b.data_dir)) == before


# ================================================================ 2. offset out of range


def test_fetch_beyond_high_watermark_and_below_log_start(shared: BrokerProcess, healthy: Healthy) -> None:
    topic = healthy.topic + ".data"
    with WireClient(shared.bootstrap) as c:
        create_topic(c, topic)
        produce_ok(c, topic, [b"a", b"b", b"c"])
        for offset in (4, 1000, 2**62, -1, -(2**63)):
            p = fetch_partition(c, topic, offset)
            assert (p.error_code, p.high_watermark, p.records) == (OUT_OF_RANGE, 3, b""), offset
        # the high watermark itself is in range: nothing yet, no error
        p = fetch_partition(c, topic, 3)
        assert (p.error_code, p.high_watermark, p.records) == (ErrorCode.NONE, 3, b"")
        assert fetch_all(c, topic) == [(0, b"a"), (1, b"b"), (2, b"c")]
    healthy.check()


def test_fetch_below_log_start_after_retention(short_retention: BrokerProcess) -> None:
    b = short_retention
    with Healthy(b, "small") as h, WireClient(b.bootstrap) as c:
        create_topic(c, "rolled")
        for i in range(4):  # 4 appends of 700 bytes: a segment each (log.segment.bytes=1024)
            assert produce_ok(c, "rolled", [bytes([65 + i]) * 700]) == i
        wait_until(
            lambda: list(list_offsets(c, "rolled", -2).old_style_offsets) == [3],
            "retention deleted the closed segments",
        )
        for offset in (0, 2, 5):
            p = fetch_partition(c, "rolled", offset)
            assert (p.error_code, p.high_watermark, p.records) == (OUT_OF_RANGE, 4, b""), offset
        assert fetch_all(c, "rolled", offset=3) == [(3, b"D" * 700)]
        h.check()


# ================================================================ 3. message.max.bytes


def test_message_larger_than_message_max_bytes(small_messages: BrokerProcess) -> None:
    b = small_messages
    with Healthy(b, "small-ok") as h, WireClient(b.bootstrap) as c:
        topic = "limits"
        c.request(METADATA, 0, metadata_body(topic))
        # Kafka counts a legacy message with its 12-byte offset/size prefix: 12 + 14 + 974 = 1000
        exact = build_message_set([(None, b"x" * 974)])
        assert len(exact) == 1000
        assert produce_ok(c, topic, [b"x" * 974]) == 0
        too_big = [
            build_message_set([(None, b"y" * 975)]),  # 1001 bytes
            build_message_set([(None, b"y" * 1000)], magic=1),
            build_message_set([(None, b"small"), (None, b"y" * 2000)]),  # the whole set is refused
            build_message_set([(None, random.Random(1).randbytes(2000))], compression=Compression.GZIP),
        ]
        for records in too_big:
            p = produce_response(c, topic, 0, records)
            assert (p.error_code, p.base_offset) == (ErrorCode.MESSAGE_TOO_LARGE, -1)
            assert high_watermark(c, topic) == 1, "nothing of a refused set may be appended"
        # smaller messages in the same partition still work
        assert produce_ok(c, topic, [b"small", b"also small"]) == 1
        assert fetch_all(c, topic) == [(0, b"x" * 974), (1, b"small"), (2, b"also small")]
        h.check()


# ====================================================================== 4. corrupt CRC


def _flip_value_byte(ms: bytearray) -> None:
    ms[-1] ^= 0xFF  # last byte of the last message's value


def _flip_crc(ms: bytearray) -> None:
    ms[12] ^= 0x01  # first message's CRC field


def _bad_magic(ms: bytearray) -> None:
    ms[16] = 7  # magic 7, with a CRC that matches it: a bad message, not a bad checksum
    size = struct.unpack_from(">i", ms, 8)[0]
    struct.pack_into(">I", ms, 12, zlib.crc32(bytes(ms[16 : 12 + size])))


def _truncate(ms: bytearray) -> None:
    del ms[-3:]


def _tiny_size(ms: bytearray) -> None:
    struct.pack_into(">i", ms, 8, 3)


@pytest.mark.parametrize(
    "corrupt",
    [_flip_value_byte, _flip_crc, _bad_magic, _truncate, _tiny_size],
    ids=["value-byte-flipped", "crc-flipped", "magic-7", "truncated", "size-too-small"],
)
def test_corrupt_message_set(
    shared: BrokerProcess,
    healthy: Healthy,
    corrupt: Callable[[bytearray], None],
) -> None:
    topic = healthy.topic + ".data"
    with WireClient(shared.bootstrap) as c:
        create_topic(c, topic)
        produce_ok(c, topic, [b"good"])
        ms = bytearray(build_message_set([(b"k1", b"first value"), (b"k2", b"second value")]))
        corrupt(ms)
        p = produce_response(c, topic, 0, bytes(ms))
        assert (p.error_code, p.base_offset) == (ErrorCode.CORRUPT_MESSAGE, -1)
        assert high_watermark(c, topic) == 1, "nothing of a corrupt set may be appended"
        assert fetch_all(c, topic) == [(0, b"good")]
    healthy.check()


# ================================================================ 5. invalid topic names

INVALID_NAMES = ["bad/name", "..", ".", "a" * 250, "with space", "", "../../etc", "ümlaut", "tab\tname"]


def test_invalid_topic_names(shared: BrokerProcess, healthy: Healthy) -> None:
    before = set(os.listdir(shared.data_dir))
    with WireClient(shared.bootstrap) as c:
        md = c.request(METADATA, 0, metadata_body(*INVALID_NAMES, "a" * 249))
        codes = {t.name: t.error_code for t in md.topics}
        expected = dict.fromkeys(INVALID_NAMES, ErrorCode.INVALID_TOPIC_EXCEPTION)
        assert codes == {**expected, "a" * 249: ErrorCode.NONE}
        for name in INVALID_NAMES:
            p = produce_response(c, name, 0, build_message_set([(None, b"x")]))
            assert p.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, name
    assert set(os.listdir(shared.data_dir)) - before == {"a" * 249 + "-0"}
    healthy.check()


# ============================================================ 6. unknown key / version


UNSUPPORTED = [(9999, 0), (50, 0), (-1, 0), (METADATA, 99), (PRODUCE, 9), (FETCH, 12), (METADATA, -1)]


@pytest.mark.parametrize(("api_key", "version"), UNSUPPORTED, ids=[f"{k}v{v}" for k, v in UNSUPPORTED])
def test_unsupported_api_key_or_version_closes(
    shared: BrokerProcess, healthy: Healthy, api_key: int, version: int
) -> None:
    with WireClient(shared.bootstrap) as bad:
        bad.send_raw(raw_frame(api_key, version, 7, struct.pack(">i", 0)))
        expect_closed(bad)
        reason = closing_reason(shared, bad)
    assert reason.startswith(f"unsupported request {ApiKey.name_of(api_key)} v{version}"), reason
    healthy.check()


def _bad_then_good(broker: BrokerProcess, attempts: int) -> list[str]:
    """Send a bad request with good ones pipelined behind it, ``attempts`` times; the peers used."""
    good = b"".join(
        kproto.encode_request(METADATA, 0, cid, metadata_body(), client_id="x") for cid in range(8, 13)
    )
    peers = []
    for _ in range(attempts):
        with WireClient(broker.bootstrap) as bad:
            bad.send_raw(raw_frame(9999, 0, 7, struct.pack(">i", 0)) + good)
            expect_closed(bad)  # nothing after the bad request is answered
            peers.append(peer(bad))
    return peers


def test_requests_behind_a_bad_one_are_not_served(shared: BrokerProcess, healthy: Healthy) -> None:
    _bad_then_good(shared, 20)
    healthy.check()


def test_close_reason_logged_when_more_requests_follow(shared: BrokerProcess) -> None:
    # 40 attempts: with the race as it is, all 40 reasons logged has odds below 1e-4
    for name in _bad_then_good(shared, 40):
        shared.wait_for_log(rf"closing connection from {re.escape(name)}: unsupported request", timeout=2)


# ==================================================================== 7. truncated frame


def test_truncated_frame_then_disconnect(shared: BrokerProcess, healthy: Healthy) -> None:
    with WireClient(shared.bootstrap) as bad:
        name = peer(bad)
        bad.send_raw(struct.pack(">i", 100) + b"0123456789")
    shared.wait_for_log(
        rf" INFO hmb\.net\.connection: {re.escape(name)} disconnected in the middle "
        r"of a request \(14 bytes\)"
    )
    healthy.check()


# ======================================================== 8. socket.request.max.bytes


def test_oversized_frame_prefix_closes_at_once(small_requests: BrokerProcess) -> None:
    b = small_requests
    with Healthy(b, "ok") as h, WireClient(b.bootstrap) as bad:
        started = time.monotonic()
        # Only the prefix: a broker that waited for (or buffered) the announced megabyte would
        # never close this connection; this one must decide on the four bytes alone.
        bad.send_raw(struct.pack(">i", 1_000_000))
        expect_closed(bad)
        assert time.monotonic() - started < 5
        assert closing_reason(b, bad) == "frame of 1000000 bytes exceeds the limit of 2048 bytes"
        h.check()


def test_request_size_limit_boundary(small_requests: BrokerProcess) -> None:
    """socket.request.max.bytes bounds the size field (the frame without its prefix), as in Kafka."""
    b = small_requests

    def metadata_frame(payload: int) -> bytes:
        frame = kproto.encode_request(METADATA, 0, 1, metadata_body(), client_id="c" * (payload - 14))
        assert len(frame) == payload + 4
        return frame

    with Healthy(b, "ok2") as h, WireClient(b.bootstrap) as at_limit, WireClient(b.bootstrap) as over:
        at_limit.send_raw(metadata_frame(2048))
        frame = at_limit.read_frame()
        assert frame is not None and kproto.decode_response(METADATA, 0, frame).correlation_id == 1
        over.send_raw(metadata_frame(2049))
        expect_closed(over)
        assert closing_reason(b, over) == "frame of 2049 bytes exceeds the limit of 2048 bytes"
        h.check()


# ======================================================================= 9. garbage


@pytest.mark.parametrize("framing", ["as-is", "exact-prefix"])
def test_random_garbage(shared: BrokerProcess, healthy: Healthy, framing: str) -> None:
    garbage = os.urandom(64 * 1024)
    if framing == "exact-prefix":  # a well-formed frame around garbage: reaches the header/body decoders
        garbage = kproto.add_prefix(garbage[4:])
    with socket.create_connection(("127.0.0.1", shared.port), timeout=10) as s:
        s.sendall(garbage)
        s.shutdown(socket.SHUT_WR)  # whatever the prefix announced, the broker gets EOF
        drain(s)  # returns when the broker closes: it must (bounded by the timeout)
    assert shared.alive(), f"garbage starting {garbage[:16].hex()} killed the broker"
    healthy.check()


_plausible_header = st.builds(
    lambda key, version, cid, body: struct.pack(">hhih", key, version, cid, 4) + b"hypo" + body,
    st.sampled_from([0, 1, 2, 3, 8, 9, 10]),
    st.integers(0, 1),
    st.integers(-(2**31), INT32_MAX),
    st.binary(max_size=300),
)
GARBAGE = st.one_of(
    st.binary(min_size=1, max_size=2048),  # anything
    st.binary(max_size=2048).map(kproto.add_prefix),  # well framed, anything inside
    _plausible_header.map(kproto.add_prefix),  # a header the broker accepts, a garbage body
)


def test_hypothesis_garbage(shared: BrokerProcess, healthy: Healthy) -> None:
    @settings(max_examples=60, deadline=None)
    @given(data=GARBAGE)
    def one(data: bytes) -> None:
        with socket.create_connection(("127.0.0.1", shared.port), timeout=10) as s:
            try:
                s.sendall(data)
                s.shutdown(socket.SHUT_WR)
            except (BrokenPipeError, ConnectionResetError):
                pass  # closed already: fine
            drain(s)
        assert shared.alive()

    one()
    healthy.check()


# ============================================== 10. bad size prefix, short frame, junk


def _trailing_junk() -> bytes:
    frame = kproto.encode_request(METADATA, 0, 1, metadata_body("t"), client_id="x")
    return kproto.add_prefix(frame[4:] + b"junk")


def _body_cut_short() -> bytes:
    frame = kproto.encode_request(PRODUCE, 0, 1, produce_body("t", 0, build_message_set([(None, b"v" * 50)])))
    return kproto.add_prefix(frame[4:-20])


def _huge_array_count() -> bytes:
    return raw_frame(METADATA, 0, 1, struct.pack(">i", INT32_MAX))


def _negative_array_count() -> bytes:
    return raw_frame(METADATA, 0, 1, struct.pack(">i", -2))


def _huge_bytes_length() -> bytes:
    body = struct.pack(">hih", 1, 1000, 1) + b"t" + struct.pack(">iii", 1, 0, INT32_MAX) + b"x" * 10
    return raw_frame(PRODUCE, 0, 1, body)


def _client_id_past_end() -> bytes:
    return kproto.add_prefix(struct.pack(">hhih", METADATA, 0, 1, 30000) + b"abc")


def _invalid_utf8_topic() -> bytes:
    return raw_frame(METADATA, 0, 1, struct.pack(">ih", 1, 2) + b"\xff\xfe")


BAD_FRAMES: dict[str, tuple[bytes, str]] = {
    "negative-size": (struct.pack(">i", -5) + b"x" * 10, r"negative frame size -5"),
    "min-int-size": (struct.pack(">i", -(2**31)), r"negative frame size -2147483648"),
    "zero-length": (struct.pack(">i", 0), r"request frame of 4 bytes is shorter than a header"),
    "shorter-than-header": (kproto.add_prefix(b"\x00\x03\x00"), r"request frame of 7 bytes is shorter than"),
    "trailing-junk": (_trailing_junk(), r"malformed request: 4 unexpected bytes after MetadataRequest"),
    "body-cut-short": (_body_cut_short(), r"malformed request: cannot decode ProduceRequest"),
    "huge-array-count": (_huge_array_count(), r"malformed request: cannot decode MetadataRequest"),
    "negative-array-count": (_negative_array_count(), r"malformed request: "),
    "huge-bytes-length": (_huge_bytes_length(), r"malformed request: cannot decode ProduceRequest"),
    "client-id-past-end": (_client_id_past_end(), r"malformed request: cannot decode request header"),
    "invalid-utf8-topic": (_invalid_utf8_topic(), r"malformed request: cannot decode MetadataRequest"),
}


@pytest.mark.parametrize("case", list(BAD_FRAMES))
def test_bad_frame_closes_with_reason(shared: BrokerProcess, healthy: Healthy, case: str) -> None:
    data, expected = BAD_FRAMES[case]
    with WireClient(shared.bootstrap) as bad:
        bad.send_raw(data)
        expect_closed(bad)
        reason = closing_reason(shared, bad)
    assert re.match(expected, reason), reason
    healthy.check()


# ================================================================ 11. client goes away


def test_disconnect_mid_request(shared: BrokerProcess, healthy: Healthy) -> None:
    topic = healthy.topic + ".data"
    with WireClient(shared.bootstrap) as c:
        create_topic(c, topic)
        produce_ok(c, topic, [b"kept"])
    frame = kproto.encode_request(PRODUCE, 0, 1, produce_body(topic, 0, build_message_set([(None, b"lost")])))
    with WireClient(shared.bootstrap) as bad:
        name = peer(bad)
        bad.send_raw(frame[: len(frame) // 2])
    half = len(frame) // 2
    shared.wait_for_log(rf"{re.escape(name)} disconnected in the middle of a request \({half} bytes\)")
    with WireClient(shared.bootstrap) as c:
        assert fetch_all(c, topic) == [(0, b"kept")], "half a request must not be appended"
    healthy.check()


@pytest.fixture(scope="module")
def big_partition(shared: BrokerProcess) -> tuple[str, int]:
    """A partition of ~8 MiB, more than the loopback socket buffers of both ends hold."""
    topic, value = "big", b"v" * 100_000
    with WireClient(shared.bootstrap) as c:
        c.request(METADATA, 0, metadata_body(topic))
        for _ in range(4):
            produce_ok(c, topic, [value] * 20)
    return topic, 80


@pytest.mark.parametrize("abort", [True, False], ids=["reset", "close"])
def test_disconnect_mid_response(
    shared: BrokerProcess, healthy: Healthy, big_partition: tuple[str, int], abort: bool
) -> None:
    topic, count = big_partition
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)  # before connect: no autotuning
    s.settimeout(10)
    s.connect(("127.0.0.1", shared.port))
    ours = s.getsockname()[1]
    s.sendall(kproto.encode_request(FETCH, 0, 1, fetch_body(topic, 0, 0, max_bytes=16 << 20)))

    # The response has started to arrive and the broker has more of it queued: it is in the
    # middle of writing (8 MiB do not fit in our 64 KiB window plus its send buffer) ...
    def mid_response() -> bool:
        table = tcp_table()
        mine, theirs = table.get((ours, shared.port)), table.get((shared.port, ours))
        return mine is not None and theirs is not None and mine.rx_queue > 0 and theirs.tx_queue > 0

    wait_until(mid_response, "the broker is in the middle of the response")
    side = broker_side(shared, s)
    assert side is not None
    if abort:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()  # ... and we go away without reading it
    wait_until(lambda: not broker_holds_socket(shared, side.inode), "the broker closed its end", timeout=10)
    with WireClient(shared.bootstrap) as c:  # the partition itself is intact and served in full
        assert len(fetch_all(c, topic)) == count
    healthy.check()


def test_disconnect_during_long_poll_releases_connection(broker: BrokerProcess) -> None:
    """A client that closes while its fetch long-polls must not keep a broker socket for max_wait."""
    with Healthy(broker, "quiet") as h:
        bad = WireClient(broker.bootstrap)
        hw = high_watermark(bad, "quiet")
        bad.send(FETCH, 0, fetch_body("quiet", 0, hw, max_wait_ms=INT32_MAX, min_bytes=1))
        wait_broker_read_everything(broker, bad.sock)
        side = broker_side(broker, bad.sock)
        assert side is not None
        bad.close()
        wait_until(
            lambda: not broker_holds_socket(broker, side.inode),
            "the broker closed the socket of the departed client",
            timeout=3,
        )
        h.check()


# ========================================================================== 12. acks=0


def test_acks_zero_gets_no_response(shared: BrokerProcess, healthy: Healthy) -> None:
    topic = healthy.topic + ".data"
    with WireClient(shared.bootstrap) as c:
        c.request(METADATA, 0, metadata_body(topic))
        c.send(PRODUCE, 0, produce_body(topic, 0, build_message_set([(None, b"fire and forget")]), acks=0))
        cid = c.send(METADATA, 0, metadata_body(topic))
        frame = c.read_frame()
        assert frame is not None
        assert kproto.decode_response(METADATA, 0, frame).correlation_id == cid
        assert fetch_all(c, topic) == [(0, b"fire and forget")]
    healthy.check()


def test_acks_zero_error_closes_connection_like_kafka(shared: BrokerProcess, healthy: Healthy) -> None:
    with WireClient(shared.bootstrap) as c:
        c.send(PRODUCE, 0, produce_body(healthy.topic, 99, build_message_set([(None, b"x")]), acks=0))
        c.send(METADATA, 0, metadata_body(healthy.topic))
        expect_closed(c)
    healthy.check()


# ========================================================================== 13. bad acks


@pytest.mark.parametrize("acks", [2, -2, 100])
def test_invalid_required_acks(shared: BrokerProcess, healthy: Healthy, acks: int) -> None:
    topic = healthy.topic + ".data"
    with WireClient(shared.bootstrap) as c:
        create_topic(c, topic)
        produce_ok(c, topic, [b"before"])
        p = produce_response(c, topic, 0, build_message_set([(None, b"never")]), acks=acks)
        assert (p.error_code, p.base_offset) == (ErrorCode.INVALID_REQUIRED_ACKS, -1)
        assert fetch_all(c, topic) == [(0, b"before")]
    healthy.check()


# =========================================================== 14. responses in order


def test_pipelined_responses_come_back_in_request_order(shared: BrokerProcess, healthy: Healthy) -> None:
    topic = healthy.topic + ".data"
    kinds = [PRODUCE, METADATA, FETCH, LIST_OFFSETS]
    with WireClient(shared.bootstrap) as c:
        c.request(METADATA, 0, metadata_body(topic))
        lo_body = {
            "replica_id": -1,
            "topics": [
                {"name": topic, "partitions": [{"partition_index": 0, "timestamp": -1, "max_num_offsets": 1}]}
            ],
        }
        sent: list[tuple[int, int]] = []
        frames = bytearray()
        for i in range(50):
            api = kinds[i % len(kinds)]
            body = {
                PRODUCE: produce_body(topic, 0, build_message_set([(None, b"%d" % i)])),
                METADATA: metadata_body(topic),
                FETCH: fetch_body(topic, 0, 0, max_bytes=256),
                LIST_OFFSETS: lo_body,
            }[api]
            c.correlation_id += 1
            frames += kproto.encode_request(api, 0, c.correlation_id, body, client_id="pipeline")
            sent.append((api, c.correlation_id))
        c.send_raw(bytes(frames))  # all 50 at once, nothing read in between
        got = []
        bases = []
        for api, _ in sent:
            frame = c.read_frame()
            assert frame is not None
            resp = kproto.decode_response(api, 0, frame)
            got.append(resp.correlation_id)
            if api == PRODUCE:
                p = resp.body.responses[0].partition_responses[0]
                assert p.error_code == ErrorCode.NONE
                bases.append(p.base_offset)
            if api == LIST_OFFSETS:  # sees exactly the produces before it
                assert list(resp.body.topics[0].partitions[0].old_style_offsets) == [len(bases)]
        assert got == [cid for _, cid in sent]
        assert bases == list(range(len(bases)))
        assert [v for _, v in fetch_all(c, topic)] == [b"%d" % i for i in range(0, 50, 4)]
    healthy.check()


# ================================================================ 15. long-poll fetch


def test_long_poll_wakes_on_produce(shared: BrokerProcess, healthy: Healthy) -> None:
    topic = healthy.topic + ".data"
    with WireClient(shared.bootstrap) as producer, WireClient(shared.bootstrap) as consumer:
        create_topic(producer, topic)
        produce_ok(producer, topic, [b"old"])
        started = time.monotonic()
        cid = consumer.send(FETCH, 0, fetch_body(topic, 0, 1, max_wait_ms=5000, min_bytes=1))
        # Ordering "the fetch waits" before "the produce" by a condition, not a sleep: the broker
        # process has read the whole fetch (its socket's receive queue is empty).  Its handler then
        # runs to the wait on the partition's append event without yielding to I/O, so a produce
        # read from another socket afterwards can only be appended later (one trio loop).  Were
        # this reasoning wrong, the fetch would find the data at once: the test could pass
        # without exercising the wake-up, never fail falsely.
        wait_broker_read_everything(shared, consumer.sock)
        readable, _, _ = select.select([consumer.sock], [], [], 0)
        assert not readable, "the fetch was answered before any data arrived: min_bytes ignored"
        produce_ok(producer, topic, [b"new"])
        frame = consumer.read_frame()
        elapsed = time.monotonic() - started
        assert frame is not None
        resp = kproto.decode_response(FETCH, 0, frame)
        assert resp.correlation_id == cid
        p = resp.body.responses[0].partitions[0]
        assert (p.error_code, p.high_watermark) == (ErrorCode.NONE, 2)
        assert [(r.offset, r.value) for r in read_message_set(p.records)] == [(1, b"new")]
        assert elapsed < 4, f"answered after {elapsed:.2f}s of max_wait 5s: not woken by the append"
    healthy.check()


def test_long_poll_without_data_returns_empty_after_max_wait(shared: BrokerProcess, healthy: Healthy) -> None:
    topic = healthy.topic + ".data"
    with WireClient(shared.bootstrap) as c:
        create_topic(c, topic)
        produce_ok(c, topic, [b"only"])
        started = time.monotonic()
        p = fetch_partition(c, topic, 1, max_wait_ms=500, min_bytes=1)
        elapsed = time.monotonic() - started
        assert (p.error_code, p.high_watermark, p.records) == (ErrorCode.NONE, 1, b"")
        assert 0.45 <= elapsed < 3, elapsed
    healthy.check()


# ================================================================ 16. ListOffsets v0


def test_list_offsets(shared: BrokerProcess, healthy: Healthy) -> None:
    topic = healthy.topic + ".data"
    with WireClient(shared.bootstrap) as c:
        c.request(METADATA, 0, metadata_body(topic))
        empty = list_offsets(c, topic, -1)
        assert (empty.error_code, list(empty.old_style_offsets)) == (ErrorCode.NONE, [0])
        produce_ok(c, topic, [b"a", b"b", b"c"])
        latest = list_offsets(c, topic, -1)
        assert latest.error_code == ErrorCode.NONE
        assert latest.old_style_offsets[0] == 3 == high_watermark(c, topic)
        assert list(list_offsets(c, topic, -1, max_num=1).old_style_offsets) == [3]
        earliest = list_offsets(c, topic, -2)
        assert (earliest.error_code, list(earliest.old_style_offsets)) == (ErrorCode.NONE, [0])
        for t, part in (("no-such-topic-here", 0), (topic, 5)):
            lo = list_offsets(c, t, -1, partition=part)
            assert (lo.error_code, list(lo.old_style_offsets)) == (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, [])
    healthy.check()


# ====================================================== 17. OffsetCommit / OffsetFetch


def test_offset_commit_errors(shared: BrokerProcess, healthy: Healthy) -> None:
    topic = healthy.topic
    with WireClient(shared.bootstrap) as c:

        def commit(group: str, offset: int, metadata: str | None = "", version: int = 1) -> int:
            body = commit_body(group, topic, 0, offset, metadata)
            return int(c.request(OFFSET_COMMIT, version, body).topics[0].partitions[0].error_code)

        never = offset_fetch(c, "group-a", topic)
        assert (never.committed_offset, never.error_code) == (-1, ErrorCode.NONE)

        assert commit("group-a", 5, "m" * 4096) == ErrorCode.NONE  # the limit itself is fine
        assert commit("group-a", 6, "m" * 4097) == ErrorCode.OFFSET_METADATA_TOO_LARGE
        got = offset_fetch(c, "group-a", topic)
        assert (got.committed_offset, got.metadata, got.error_code) == (5, "m" * 4096, ErrorCode.NONE)

        assert commit("", 7) == ErrorCode.INVALID_GROUP_ID
        assert commit("", 7, version=0) == ErrorCode.INVALID_GROUP_ID
        assert commit("group-a", 8, None, version=0) == ErrorCode.NONE  # null metadata is allowed
        assert offset_fetch(c, "group-a", topic, version=0).committed_offset == 8
        never = offset_fetch(c, "group-b", topic)
        assert (never.committed_offset, never.error_code) == (-1, ErrorCode.NONE)
    healthy.check()


def test_committed_offset_survives_kill_9(broker: BrokerProcess) -> None:
    with WireClient(broker.bootstrap) as c:
        c.request(METADATA, 0, metadata_body("t"))
        produce_ok(c, "t", [b"a", b"b"])
        resp = c.request(OFFSET_COMMIT, 1, commit_body("g", "t", 0, 2, "after b"))
        assert resp.topics[0].partitions[0].error_code == ErrorCode.NONE
    broker.kill()
    broker.restart()
    with WireClient(broker.bootstrap) as c:
        got = offset_fetch(c, "g", "t")
        assert (got.committed_offset, got.metadata, got.error_code) == (2, "after b", ErrorCode.NONE)
        assert fetch_all(c, "t") == [(0, b"a"), (1, b"b")]


# ================================================== 18. resource exhaustion by request


def create_topics_body(*topics: tuple[str, int], validate_only: bool = False) -> dict[str, Any]:
    return {
        "topics": [
            {"name": name, "num_partitions": n, "replication_factor": 1, "assignments": [], "configs": []}
            for name, n in topics
        ],
        "timeout_ms": 1000,
        "validate_only": validate_only,
    }


def test_create_topics_bounded_like_kafka(shared: BrokerProcess, healthy: Healthy) -> None:
    """Found by bench/fuzz_live.py: num_partitions = 2**31 - 1 had the broker create partition
    directories until it ran out (and block every other connection meanwhile).  Kafka's
    controller bounds one request to 10,000 records (a topic and each partition is one):
    beyond that every topic of the request gets POLICY_VIOLATION and nothing is created."""
    before = set(os.listdir(shared.data_dir))
    with WireClient(shared.bootstrap, timeout=5) as c:
        # refused up front: creating (and rolling back) 2**31 directories would outlast the 5 s timeout
        got = c.request(ApiKey.CREATE_TOPICS, 1, create_topics_body(("huge", INT32_MAX), ("small", 1)))
        assert [(t.name, t.error_code, t.error_message) for t in got.topics] == [
            (name, ErrorCode.POLICY_VIOLATION, "Unable to perform excessively large batch operation.")
            for name in ("huge", "small")
        ]
        # the boundary: 1 topic record + 9,999 partition records is allowed (validated only here)
        ok = c.request(ApiKey.CREATE_TOPICS, 1, create_topics_body(("edge", 9_999), validate_only=True))
        assert ok.topics[0].error_code == ErrorCode.NONE
        over = c.request(ApiKey.CREATE_TOPICS, 1, create_topics_body(("edge", 10_000), validate_only=True))
        assert over.topics[0].error_code == ErrorCode.POLICY_VIOLATION
    assert set(os.listdir(shared.data_dir)) == before  # nothing was created
    healthy.check()


def test_large_create_topics_does_not_stall_other_connections(
    shared: BrokerProcess, healthy: Healthy
) -> None:
    """Creating 4,000 partitions takes the broker seconds of file work; it used to do them
    in one piece, and every other client waited.  Now, while the request is under way,
    another connection is answered (ordering, not timing: its answers arrive before the
    CreateTopics response), sees the topic as not yet available, and cannot create it
    a second time."""
    with WireClient(shared.bootstrap, timeout=60) as big, WireClient(shared.bootstrap, timeout=10) as other:
        big.send(ApiKey.CREATE_TOPICS, 1, create_topics_body(("wide", 4_000)))
        wait_until(lambda: any(n.startswith("wide-") for n in os.listdir(shared.data_dir)), "creation began")
        meta = other.request(ApiKey.METADATA, 1, {"topics": [{"name": "wide"}]})
        again = other.request(ApiKey.CREATE_TOPICS, 1, create_topics_body(("wide", 1)))
        assert not _readable(big.sock), "CreateTopics finished before the other connection was served"
        assert meta.topics[0].error_code == ErrorCode.LEADER_NOT_AVAILABLE and not meta.topics[0].partitions
        assert again.topics[0].error_code == ErrorCode.TOPIC_ALREADY_EXISTS
        frame = big.read_frame()
        assert frame is not None
        done = kproto.decode_response(ApiKey.CREATE_TOPICS, 1, frame).body
        assert done.topics[0].error_code == ErrorCode.NONE
        meta = other.request(ApiKey.METADATA, 1, {"topics": [{"name": "wide"}]})
        assert len(meta.topics[0].partitions) == 4_000
        other.sock.settimeout(60)  # a bound on the wait, not a speed target: it is ~1 s here
        deleted = other.request(ApiKey.DELETE_TOPICS, 1, {"topic_names": ["wide"], "timeout_ms": 30_000})
        assert deleted.responses[0].error_code == ErrorCode.NONE  # the shared broker stays small
    healthy.check()


def _readable(sock: socket.socket) -> bool:
    return bool(select.select([sock], [], [], 0)[0])


def test_offset_commit_retention_near_int64_max(shared: BrokerProcess, healthy: Healthy) -> None:
    """Found by bench/fuzz_live.py: OffsetCommit v2-v4 with retention_time_ms near 2**63 made
    the expire timestamp (commit time + retention) overflow its int64 field: an internal error
    that closed the connection.  It is clamped, and the commit succeeds."""
    topic = healthy.topic
    with WireClient(shared.bootstrap) as c:
        for retention in (2**63 - 1, 2**62):
            body = {**commit_body("huge-retention", topic, 0, 3), "retention_time_ms": retention}
            del body["topics"][0]["partitions"][0]["commit_timestamp"]
            resp = c.request(OFFSET_COMMIT, 2, body)
            assert resp.topics[0].partitions[0].error_code == ErrorCode.NONE
        assert offset_fetch(c, "huge-retention", topic).committed_offset == 3
    healthy.check()
