"""hmb_client through a meddling TCP proxy: version fallback and idempotent retries.

:class:`Proxy` sits between the client and a broker (hmb or Tansu) and
misbehaves on purpose, at the level of Kafka frames:

* ``legacy``: closes the connection when the first request is ApiVersions,
  as a Kafka 0.8 broker does, so the client must fall back to the 0.8.2
  table (Metadata/Produce/Fetch/ListOffsets v0, magic 0).
* ``drop``: forwards the first Produce request and then cuts both
  connections before its answer: the client cannot know whether the batch
  was written and must retry it -- with the same producer id, epoch and
  sequence when idempotent, so the broker does not append it twice.
* ``duplicate``: sends the first Produce request to the broker twice (a
  duplicate on the wire) and hides the second answer.

The broker behind it advertises the proxy's address, so every connection
the client makes (bootstrap, leader, coordinator) goes through the proxy.
"""

from __future__ import annotations

import socket
import struct
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from hmb_client.admin import Admin
from hmb_client.cluster import Cluster, ClusterConfig, parse_bootstrap
from hmb_client.consumer import Consumer
from hmb_client.errors import UnsupportedCompressionTypeError, UnsupportedVersionError
from hmb_client.producer import Producer
from hmb_client.runtime import IoThread
from hmb_client.structs import TopicPartition
from kproto import ApiKey


def _read_frame(sock: socket.socket) -> bytes | None:
    head = b""
    while len(head) < 4:
        chunk = sock.recv(4 - len(head))
        if not chunk:
            return None
        head += chunk
    (size,) = struct.unpack(">i", head)
    body = bytearray()
    while len(body) < size:
        chunk = sock.recv(min(1 << 20, size - len(body)))
        if not chunk:
            return None
        body += chunk
    return head + bytes(body)


class Proxy:
    """A frame-aware proxy on 127.0.0.1; set ``upstream`` (host, port) before connecting."""

    def __init__(self, mode: str) -> None:
        self.upstream: tuple[str, int] | None = None
        self.mode = mode
        self.tripped = threading.Event()  # the misbehaviour happened
        self.produce_versions: list[int] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._sockets: list[socket.socket] = []
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def close(self) -> None:
        self._closed = True
        self._listener.close()
        for s in self._sockets:
            try:
                s.close()
            except OSError:
                pass

    def __enter__(self) -> Proxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            assert self.upstream is not None
            server = socket.create_connection(self.upstream)
            self._sockets += [client, server]
            hidden: set[int] = set()
            threading.Thread(target=self._upstream, args=(client, server, hidden), daemon=True).start()
            threading.Thread(target=self._downstream, args=(server, client, hidden), daemon=True).start()

    def _upstream(self, client: socket.socket, server: socket.socket, hidden: set[int]) -> None:
        try:
            while (frame := _read_frame(client)) is not None:
                api_key, version, correlation = struct.unpack_from(">hhi", frame, 4)
                if api_key == ApiKey.API_VERSIONS and self.mode == "legacy":
                    self.tripped.set()
                    break
                if api_key == ApiKey.PRODUCE:
                    self.produce_versions.append(version)
                first_produce = api_key == ApiKey.PRODUCE and not self.tripped.is_set()
                if first_produce:
                    hidden.add(correlation)  # before sending: the answer may come back at once
                server.sendall(frame)
                if first_produce and self.mode == "drop":
                    self.tripped.set()
                    time.sleep(0.3)  # let the broker append it, then lose the answer
                    break
                if first_produce and self.mode == "duplicate":
                    self.tripped.set()
                    server.sendall(frame)
        except OSError:
            pass
        for s in (client, server):
            s.close()

    def _downstream(self, server: socket.socket, client: socket.socket, hidden: set[int]) -> None:
        seen: set[int] = set()
        try:
            while (frame := _read_frame(server)) is not None:
                (correlation,) = struct.unpack_from(">i", frame, 4)
                if correlation in hidden:
                    if correlation in seen or self.mode == "drop":
                        continue  # a lost answer, or the duplicate's (the client asked once)
                    seen.add(correlation)
                client.sendall(frame)
        except OSError:
            pass
        for s in (client, server):
            s.close()


@pytest.fixture
def hmb_behind(make_broker: Callable[..., Any]) -> Iterator[Callable[[str], Proxy]]:
    """``hmb_behind(mode)``: a fresh hmb broker reachable only through a :class:`Proxy`."""
    proxies: list[Proxy] = []

    def start(mode: str) -> Proxy:
        proxy = Proxy(mode)
        proxies.append(proxy)
        b = make_broker(f"advertised.listeners=PLAINTEXT://127.0.0.1:{proxy.port}")
        proxy.upstream = ("127.0.0.1", b.port)
        return proxy

    yield start
    for proxy in proxies:
        proxy.close()


@pytest.fixture
def tansu_behind() -> Iterator[Callable[[str], Proxy]]:
    """``tansu_behind(mode)``: a fresh in-memory Tansu reachable only through a :class:`Proxy`."""
    from bench.tansu import TansuUnavailableError, _answers_api_versions, free_port, tansu_binary

    try:
        binary = tansu_binary()
    except TansuUnavailableError as exc:
        pytest.skip(str(exc))
    started: list[tuple[Proxy, subprocess.Popen[bytes]]] = []

    def start(mode: str) -> Proxy:
        proxy = Proxy(mode)
        port = free_port()
        proc = subprocess.Popen(
            [
                str(binary),
                "broker",
                "--listener-url",
                f"tcp://127.0.0.1:{port}",
                "--advertised-listener-url",
                f"tcp://127.0.0.1:{proxy.port}",
                "--storage-engine",
                "memory://tansu/",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        started.append((proxy, proc))
        deadline = time.monotonic() + 30
        while not _answers_api_versions(port):
            assert proc.poll() is None and time.monotonic() < deadline, "tansu did not start"
            time.sleep(0.05)  # polling a port: Tansu gives no readiness signal
        proxy.upstream = ("127.0.0.1", port)
        return proxy

    yield start
    for proxy, proc in started:
        proxy.close()
        proc.terminate()
        proc.wait(10)


def negotiated(bootstrap: str) -> dict[int, tuple[int, int]]:
    """The version table a fresh connection to ``bootstrap`` negotiates."""
    io = IoThread("probe")
    try:

        async def probe() -> dict[int, tuple[int, int]]:
            assert io.nursery is not None
            cluster = Cluster(ClusterConfig(parse_bootstrap(bootstrap)), io.nursery)
            conn = await cluster.any_connection()
            versions = dict(conn.versions)
            await cluster.close()
            return versions

        return io.run(probe)
    finally:
        io.close()


def consume(bootstrap: str, topic: str, n: int, partition: int = 0, timeout: float = 30) -> list[Any]:
    with Consumer(bootstrap, auto_offset_reset="earliest") as c:
        c.assign([TopicPartition(topic, partition)])
        got: list[Any] = []
        deadline = time.monotonic() + timeout
        while len(got) < n and time.monotonic() < deadline:
            got += c.poll(0.5)
        time.sleep(0.3)
        got += c.poll(0.2)  # anything beyond n (a duplicate) shows up too
        return got


# ---------------------------------------------------------------- 0.8 fallback


def test_broker_closing_on_api_versions_gets_the_0_8_2_table(hmb_behind: Callable[[str], Proxy]) -> None:
    proxy = hmb_behind("legacy")
    versions = negotiated(proxy.bootstrap)
    assert proxy.tripped.is_set()
    assert versions[ApiKey.PRODUCE] == (0, 0) and versions[ApiKey.FETCH] == (0, 0)
    with Producer(proxy.bootstrap, compression_type="gzip") as p:
        futures = [p.send("legacy", b"v%d" % i, key=b"k%d" % i, partition=0) for i in range(300)]
        p.flush(30)
        assert [f.get(0).offset for f in futures] == list(range(300))
    assert set(proxy.produce_versions) == {0}
    got = consume(proxy.bootstrap, "legacy", 300)
    assert [(r.offset, r.key, r.value, r.timestamp, r.headers) for r in got] == [
        (i, b"k%d" % i, b"v%d" % i, None, ()) for i in range(300)
    ]
    with Admin(proxy.bootstrap) as admin:
        assert admin.describe_topic("legacy").partitions[0].latest_offset == 300
        with pytest.raises(UnsupportedVersionError):
            admin.delete_topic("legacy")


def test_headers_zstd_and_idempotence_need_a_modern_broker(hmb_behind: Callable[[str], Proxy]) -> None:
    proxy = hmb_behind("legacy")
    with Producer(proxy.bootstrap) as p:
        with pytest.raises(UnsupportedVersionError, match="headers"):
            p.send("hdr", b"v", headers=[("a", b"b")], partition=0).get(30)
        assert p.send("hdr", b"plain", partition=0).get(30).offset >= 0
    with Producer(proxy.bootstrap, compression_type="zstd") as p:
        with pytest.raises(UnsupportedCompressionTypeError, match="zstd"):
            p.send("z", b"v", partition=0).get(30)
    with Producer(proxy.bootstrap, enable_idempotence=True) as p:
        with pytest.raises(UnsupportedVersionError):
            p.send("idem", b"v", partition=0).get(30)


def test_idempotence_config_rules() -> None:
    with pytest.raises(ValueError, match="acks"):
        Producer("127.0.0.1:1", enable_idempotence=True, acks=1)
    with pytest.raises(ValueError, match="max_in_flight"):
        Producer("127.0.0.1:1", enable_idempotence=True, max_in_flight_requests_per_connection=6)


# ---------------------------------------------------------------- idempotent retries


@pytest.mark.parametrize("kind", ["tansu_behind", "hmb_behind"])
@pytest.mark.parametrize("mode", ["drop", "duplicate"])
def test_idempotent_retry_is_not_duplicated(request: pytest.FixtureRequest, kind: str, mode: str) -> None:
    proxy = request.getfixturevalue(kind)(mode)
    if negotiated(proxy.bootstrap).get(ApiKey.INIT_PRODUCER_ID) is None:
        pytest.skip("the broker has no InitProducerId")
    n = 2000
    with Producer(proxy.bootstrap, enable_idempotence=True, linger_ms=20, retry_backoff_ms=50) as p:
        futures = [p.send("idem", b"v%d" % i, partition=0) for i in range(n)]
        p.flush(60)
        results = [f.get(0) for f in futures]
    assert proxy.tripped.is_set()
    assert min(proxy.produce_versions) >= 3
    if mode == "drop":
        assert len(proxy.produce_versions) >= 2  # the lost request was sent again
    got = consume(proxy.bootstrap, "idem", n)
    assert [r.value for r in got] == [b"v%d" % i for i in range(n)]
    assert [r.offset for r in got] == list(range(n))
    assert [r.offset for r in results if r.offset >= 0] == [i for i, r in enumerate(results) if r.offset >= 0]


def test_plain_producer_retry_may_duplicate(tansu_behind: Callable[[str], Proxy]) -> None:
    """The control experiment: without idempotence the same drop writes the batch twice."""
    proxy = tansu_behind("drop")
    with Producer(proxy.bootstrap, acks=-1, linger_ms=20, retry_backoff_ms=50) as p:
        futures = [p.send("plain", b"v%d" % i, partition=0) for i in range(500)]
        p.flush(60)
        [f.get(0) for f in futures]
    got = consume(proxy.bootstrap, "plain", 500)
    assert len(got) > 500  # the first batch twice
    assert {r.value for r in got} == {b"v%d" % i for i in range(500)}
