"""Helpers and brokers shared by the bad-input system tests (``test_bad_input_*.py``).

Each of those tests sends something wrong and checks two things:

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
import re
import socket
import struct
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from broker_process import BrokerProcess
from wire import WireClient, fetch_body, metadata_body, produce_body

import kproto
from kproto import ApiKey, ErrorCode
from kproto.records import build_message_set, read_message_set

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


def closing_reason(broker: BrokerProcess, client: WireClient | socket.socket, since: int) -> str:
    """The reason the broker logged (WARNING) for closing this connection.

    ``since``: ``len(broker.lines)`` before the client connected.  The kernel may give a
    new connection the port of one closed earlier, so older lines naming the same
    address must not count.
    """
    rx = rf" WARNING hmb\.net\.connection: closing connection from {re.escape(peer(client))}: (.*)$"
    return broker.wait_for_log(rx, since=since).group(1)


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
