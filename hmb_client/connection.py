"""One pipelined connection to a broker, on trio.

Many requests may be in flight; responses are matched by correlation id
(Kafka answers in order per connection, which is checked).  Requests that
expect no answer (Produce with acks=0) are only written.  When the
connection breaks, every waiting request fails with
:class:`~hmb_client.errors.KafkaConnectionError` at once, so nothing hangs.

Versions are negotiated once per connection, as Kafka's clients do: the
first request is ApiVersions in the newest version the client knows; a
broker that does not know that version answers UNSUPPORTED_VERSION in the v0
layout with its own table (every broker since 0.10 does), and the client
asks again in the newest version both know.
:meth:`BrokerConnection.pick` then gives, per API, the highest version both
sides know.  A broker that closes the connection instead (Kafka 0.8/0.9)
is reconnected to and spoken to with the 0.8.2 table (``LEGACY_VERSIONS``),
like librdkafka's ``broker.version.fallback``.  Only an orderly close counts
as that answer, and only from a broker not seen answering ApiVersions
before (``allow_legacy``): a connection *reset* during the exchange is a
network fault, and taking it for an old broker downgraded a running
producer to message format 0 (an idempotent one then failed every batch).

The socket is a plain non-blocking one driven with trio's low-level
``wait_readable``/``wait_writable``: a write that the kernel takes whole,
and a read that finds data, cost one system call and no trip through the
scheduler.  The producer sends a request per 16 KiB batch, and each
scheduler pass is an ``epoll_wait`` that lets the caller's thread take the
GIL for up to a switch interval (5 ms); a ``SocketStream`` cost several such
passes per request.  For the same reason requests may complete through a
callback run by the reader (``on_response``) instead of a task waiting on
an event, and their timeouts are kept by one watchdog per connection, not
a cancel scope per request.  A request that times out closes the
connection, as in Kafka's clients: its answer may still come, and only a
new connection tells a late answer from the next one.
"""

from __future__ import annotations

import errno
import itertools
import logging
import random
import socket
import ssl
from collections.abc import Callable
from typing import Any

import trio

import kproto
from hmb_client.errors import (
    KafkaConnectionError,
    KafkaError,
    KafkaTimeoutError,
    SaslAuthenticationFailedError,
    UnsupportedVersionError,
)
from hmb_client.sasl import SaslError, client_for
from hmb_client.security import SecuritySettings
from kproto import ApiKey

log = logging.getLogger(__name__)

#: What a Kafka 0.8.2 broker serves (it does not know ApiVersions).
LEGACY_VERSIONS: dict[int, tuple[int, int]] = {
    ApiKey.PRODUCE: (0, 0),
    ApiKey.FETCH: (0, 0),
    ApiKey.LIST_OFFSETS: (0, 0),
    ApiKey.METADATA: (0, 0),
    ApiKey.OFFSET_COMMIT: (0, 1),
    ApiKey.OFFSET_FETCH: (0, 1),
    ApiKey.FIND_COORDINATOR: (0, 0),
}

#: The versions hmb_client builds and parses, per API: :meth:`BrokerConnection.pick`'s
#: default ``ours``, and the one place a version range of the client is written.  Every
#: range reaches down to what a 0.8.2 broker serves, so the same code talks to old and
#: new brokers.  Fetch reaches v18 (whose one addition is a follower's); Produce reaches
#: v13, which names topics by id: the producer sends it when the metadata gave the id of
#: every topic in the request, else v12 (``hmb_client.producer.topic_ids``); Produce v12+,
#: EndTxn v5 and TxnOffsetCommit v5 are
#: transaction version 2, which a transactional producer speaks only where the coordinator
#: finalizes it (``hmb_client.producer.transactions``; else v11, v4, v4 at most);
#: ApiVersions, Metadata, FindCoordinator, the group APIs, the admin
#: APIs and ListOffsets (whose special times grow with its versions) go as far as kproto
#: declares and the client can honour.  OffsetCommit and OffsetFetch reach v10, which names
#: topics by id: the consumer sends it when the last metadata gave the id of every topic
#: it names, else v9 (``request_bodies.offsets_version``); the admin names topics, v9.
#: They start at 1: v0 is Kafka's ZooKeeper-stored offsets, which no Kafka-compatible
#: broker keeps.
#: Every range lies inside what kproto declares (``kproto.registry.supported_versions()``):
#: tests/hmb_client/test_versions_table.py.
CLIENT_VERSIONS: dict[int, tuple[int, int]] = {
    ApiKey.PRODUCE: (0, 13),
    ApiKey.FETCH: (0, 18),
    ApiKey.LIST_OFFSETS: (0, 11),
    ApiKey.METADATA: (0, 13),
    ApiKey.OFFSET_COMMIT: (1, 10),
    ApiKey.OFFSET_FETCH: (1, 10),
    ApiKey.FIND_COORDINATOR: (0, 6),
    ApiKey.JOIN_GROUP: (0, 9),
    ApiKey.HEARTBEAT: (0, 4),
    ApiKey.LEAVE_GROUP: (0, 5),
    ApiKey.SYNC_GROUP: (0, 5),
    ApiKey.API_VERSIONS: (0, 4),
    ApiKey.INIT_PRODUCER_ID: (0, 4),
    # the transactional producer's (hmb_client.producer.transactions)
    ApiKey.ADD_PARTITIONS_TO_TXN: (0, 3),
    ApiKey.ADD_OFFSETS_TO_TXN: (0, 3),
    ApiKey.END_TXN: (0, 5),
    ApiKey.TXN_OFFSET_COMMIT: (0, 5),
    ApiKey.CREATE_TOPICS: (0, 7),
    ApiKey.DELETE_TOPICS: (0, 3),
    ApiKey.DESCRIBE_CONFIGS: (1, 4),
    ApiKey.ALTER_CONFIGS: (0, 2),
    ApiKey.INCREMENTAL_ALTER_CONFIGS: (0, 1),
    ApiKey.CREATE_PARTITIONS: (0, 3),
    ApiKey.DELETE_RECORDS: (0, 2),
    ApiKey.LIST_GROUPS: (0, 5),
    ApiKey.DESCRIBE_GROUPS: (0, 6),
    ApiKey.DELETE_GROUPS: (0, 2),
    ApiKey.OFFSET_DELETE: (0, 0),
    ApiKey.DESCRIBE_CLUSTER: (0, 2),
    ApiKey.DESCRIBE_LOG_DIRS: (1, 5),
    ApiKey.DESCRIBE_PRODUCERS: (0, 0),
    # SaslHandshake is always v1 (the tokens then travel in SaslAuthenticate requests)
    ApiKey.SASL_HANDSHAKE: (1, 1),
    ApiKey.SASL_AUTHENTICATE: (0, 1),
    ApiKey.CREATE_ACLS: (1, 3),  # v1+: pattern types (prefixed ACLs)
    ApiKey.DESCRIBE_ACLS: (1, 3),
    ApiKey.DELETE_ACLS: (1, 3),
    ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS: (0, 0),
    ApiKey.ALTER_USER_SCRAM_CREDENTIALS: (0, 0),
}

#: The ApiVersions version every broker since 0.10 answers (and answers an unknown one in).
API_VERSIONS_REQUEST = CLIENT_VERSIONS[ApiKey.API_VERSIONS][0]
#: Who this client is, as ApiVersions v3+ tell the broker (KIP-511; letters, digits, '-', '.').
CLIENT_SOFTWARE_NAME = "hmb-client"
_UNSUPPORTED_VERSION = int(kproto.ErrorCode.UNSUPPORTED_VERSION)


def decode_api_versions(frame: bytes, version: int) -> Any:
    """An ApiVersions answer to a request of ``version``: in that version's layout, or, when
    the broker did not know the version (error 35, read before the layout is known: the
    error code comes first in every version), in the v0 layout that lists what it serves."""
    if version > API_VERSIONS_REQUEST and int.from_bytes(frame[8:10], "big") == _UNSUPPORTED_VERSION:
        version = API_VERSIONS_REQUEST
    return kproto.decode_response(ApiKey.API_VERSIONS, version, frame).body


def versions_from(low: int, api_key: int) -> tuple[int, int]:
    """``CLIENT_VERSIONS[api_key]`` raised to start at ``low``: for a feature that only
    exists from a version on (e.g. ListOffsets by timestamp, v1+)."""
    return low, CLIENT_VERSIONS[api_key][1]


#: Bytes asked of the socket per read; a read that fills it is followed by a checkpoint.
_CHUNK = 1 << 18
#: Reads that found data in a row before the reader lets other tasks run.
_READS_PER_CHECKPOINT = 16
#: Callback of a request answered in the reader: ``(response, None)`` or ``(None, error)``.
OnResponse = Callable[[Any, "BaseException | None"], None]


class _Pending:
    """A request awaiting its response: waited on (``done``) or called back (``on_response``)."""

    __slots__ = ("api_key", "deadline", "decode", "done", "error", "on_response", "response", "version")

    def __init__(
        self,
        api_key: int,
        version: int,
        decode: Callable[[bytes], Any] | None,
        on_response: OnResponse | None = None,
        deadline: float = float("inf"),
    ) -> None:
        self.api_key = api_key
        self.version = version
        #: how to read the response frame; None: the grammar (kproto.decode_response)
        self.decode = decode
        self.on_response = on_response
        #: when the watchdog times a called-back request out (waiters time themselves)
        self.deadline = deadline
        self.done: trio.Event | None = trio.Event() if on_response is None else None
        self.response: Any = None
        self.error: BaseException | None = None

    def finish(self) -> None:
        if self.on_response is None:
            assert self.done is not None
            self.done.set()
            return
        try:
            self.on_response(self.response, self.error)
        except Exception:  # a callback's bug must not take the connection down with it
            log.exception("response callback failed")


async def _tls_handshake(sock: socket.socket, context: ssl.SSLContext, host: str) -> socket.socket:
    """``sock`` wrapped in TLS, the handshake done (still non-blocking)."""
    tls = context.wrap_socket(sock, server_hostname=host, do_handshake_on_connect=False)
    try:
        while True:
            try:
                tls.do_handshake()
                return tls
            except ssl.SSLWantReadError:
                await trio.lowlevel.wait_readable(tls)
            except ssl.SSLWantWriteError:
                await trio.lowlevel.wait_writable(tls)
    except BaseException:
        tls.close()
        raise


async def _connect_socket(host: str, port: int) -> socket.socket:
    """A connected non-blocking TCP socket to ``host:port`` (each address in turn)."""
    infos = await trio.socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    if not infos:
        raise OSError(f"{host} has no address")
    last: OSError | None = None
    for family, kind, proto, _, address in infos:
        sock = socket.socket(family, kind, proto)
        try:
            sock.setblocking(False)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # requests are whole frames
            code = sock.connect_ex(address)
            if code in (errno.EINPROGRESS, errno.EWOULDBLOCK, errno.EAGAIN):
                await trio.lowlevel.wait_writable(sock)
                code = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if code:
                raise OSError(code, f"{errno.errorcode.get(code, code)} connecting to {address}")
        except OSError as exc:
            sock.close()
            last = exc
            continue
        except BaseException:
            sock.close()
            raise
        return sock
    assert last is not None
    raise last


class BrokerConnection:
    """A connection to ``host:port``; open with :meth:`open` inside a nursery."""

    def __init__(
        self,
        host: str,
        port: int,
        *,
        client_id: str,
        request_timeout_s: float,
        api_version_request: bool = True,
        security: SecuritySettings | None = None,
    ) -> None:
        self.security = security or SecuritySettings()
        self.host = host
        self.port = port
        self.client_id = client_id
        self.request_timeout_s = request_timeout_s
        self._sock: socket.socket | None = None
        self._send_lock = trio.Lock()
        self._pending: dict[int, _Pending] = {}
        self._ids = itertools.count(1)
        self._closed = trio.Event()
        self.error: BaseException | None = None
        self.api_version_request = api_version_request
        #: api key -> (min, max) the broker serves; filled by :meth:`open`
        self.versions: dict[int, tuple[int, int]] = dict(LEGACY_VERSIONS)
        #: feature name -> the level the broker finalized (ApiVersions v3+; KIP-584)
        self.features: dict[str, int] = {}
        #: True once the broker answered ApiVersions on this connection
        self.negotiated = False
        #: True when the broker ended the connection in order (EOF), not by a reset
        self.peer_closed = False

    def __repr__(self) -> str:
        return f"<BrokerConnection {self.host}:{self.port}{' closed' if self.closed else ''}>"

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    async def open(self, nursery: trio.Nursery, timeout_s: float, *, allow_legacy: bool = True) -> None:
        """Connect and negotiate versions (unless ``api_version_request`` is off).

        ``allow_legacy`` False (the broker answered ApiVersions before): a
        connection lost during the exchange is a KafkaConnectionError, never
        a reason to fall back to the 0.8.2 table.
        """
        await self._connect(nursery, timeout_s)
        if not self.api_version_request:
            return
        await self._negotiate(nursery, timeout_s, allow_legacy)
        if self.security.sasl:
            lifetime_ms = await self._authenticate(timeout_s)
            if lifetime_ms > 0:
                nursery.start_soon(self._reauthenticate, lifetime_ms, timeout_s)

    async def _api_versions(self, version: int, timeout_s: float) -> Any:
        from hmb_client import __version__  # the package imports this module: read it at call time

        body = {"client_software_name": CLIENT_SOFTWARE_NAME, "client_software_version": __version__}

        def encode(correlation_id: int) -> bytes:
            return kproto.encode_request(
                ApiKey.API_VERSIONS, version, correlation_id, body, client_id=self.client_id
            )

        pending = await self.send_encoded(
            ApiKey.API_VERSIONS, version, encode, decode=lambda frame: decode_api_versions(frame, version)
        )
        assert pending is not None
        return await self.wait(pending, timeout_s)

    async def _negotiate(self, nursery: trio.Nursery, timeout_s: float, allow_legacy: bool) -> None:
        try:
            newest = CLIENT_VERSIONS[ApiKey.API_VERSIONS][1]
            body = await self._api_versions(newest, timeout_s)
            if body.error_code == _UNSUPPORTED_VERSION:  # an older broker: ask in a version it knows
                theirs = {k.api_key: k.max_version for k in body.api_keys}.get(ApiKey.API_VERSIONS, 0)
                body = await self._api_versions(max(API_VERSIONS_REQUEST, min(newest, theirs)), timeout_s)
        except KafkaConnectionError:
            if not (allow_legacy and self.peer_closed):
                raise  # a reset or a timeout: the connection failed, it is retried
            # A pre-0.10 broker closes the connection on an unknown API key.
            log.info("%s:%d does not answer ApiVersions: using the 0.8.2 table", self.host, self.port)
            self._close_socket()
            self._closed = trio.Event()
            self.error = None
            await self._connect(nursery, timeout_s)
            return
        if body.error_code:
            code = body.error_code
            raise UnsupportedVersionError(f"{self.host}:{self.port} refused ApiVersions ({code})")
        self.versions = {k.api_key: (k.min_version, k.max_version) for k in body.api_keys}
        finalized = body.get("tagged_fields", {}).get("finalized_features") or ()
        self.features = {f.name: f.max_version_level for f in finalized}
        self.negotiated = True

    async def _connect(self, nursery: trio.Nursery, timeout_s: float) -> None:
        try:
            with trio.fail_after(timeout_s):
                self._sock = await _connect_socket(self.host, self.port)
                if self.security.tls:
                    self._sock = await _tls_handshake(self._sock, self.security.client_context(), self.host)
        except (OSError, trio.TooSlowError) as exc:
            self._closed.set()
            raise KafkaConnectionError(f"cannot connect to {self.host}:{self.port}: {exc}") from exc
        nursery.start_soon(self._reader, self._sock)
        nursery.start_soon(self._watchdog, self._closed)

    def _close_socket(self, sock: socket.socket | None = None) -> None:
        """Close ``sock`` (default: the current socket), waking whoever waits on it."""
        if sock is None or sock is self._sock:
            sock, self._sock = self._sock, None
        if sock is not None and sock.fileno() >= 0:
            trio.lowlevel.notify_closing(sock)  # wakes a waiting reader or writer
            sock.close()

    def supports(self, api_key: int, ours: tuple[int, int] | None = None) -> bool:
        """Whether :meth:`pick` would find a version (e.g. does the broker offer CreateTopics)."""
        try:
            self.pick(api_key, ours)
        except UnsupportedVersionError:
            return False
        return True

    def pick(self, api_key: int, ours: tuple[int, int] | None = None) -> int:
        """The highest version of ``api_key`` in both ``ours`` (min, max) and the broker's range.

        ``ours`` defaults to what hmb_client implements (``CLIENT_VERSIONS``).

        Raises UnsupportedVersionError when the ranges do not meet (say a
        0.8 broker asked for JoinGroup), naming both, so the caller can say
        what the broker lacks.
        """
        if ours is None:
            ours = CLIENT_VERSIONS.get(api_key, (0, -1))
        theirs = self.versions.get(api_key)
        if theirs is not None:
            low, high = max(ours[0], theirs[0]), min(ours[1], theirs[1])
            if low <= high:
                return high
        name = ApiKey(api_key).name if api_key in ApiKey._value2member_map_ else str(api_key)
        raise UnsupportedVersionError(
            f"{self.host}:{self.port} serves {name} versions {theirs or 'none'}, this client speaks {ours}"
        )

    async def _reader(self, sock: socket.socket) -> None:
        decoder = kproto.FrameDecoder()
        recv = sock.recv
        reads = 0
        try:
            while True:
                try:
                    data = recv(_CHUNK)
                except (BlockingIOError, ssl.SSLWantReadError):
                    reads = 0
                    await trio.lowlevel.wait_readable(sock)
                    continue
                except ssl.SSLWantWriteError:
                    await trio.lowlevel.wait_writable(sock)
                    continue
                if not data:
                    self.peer_closed = True
                    raise KafkaConnectionError(f"{self.host}:{self.port} closed the connection")
                decoder.feed(data)
                while (frame := decoder.next_frame()) is not None:
                    self._deliver(frame)
                reads += 1
                if len(data) == _CHUNK or reads >= _READS_PER_CHECKPOINT:
                    reads = 0
                    await trio.lowlevel.checkpoint()  # a fast sender must not starve the loop
        except (trio.ClosedResourceError, OSError, KafkaConnectionError) as exc:
            self._fail_all(exc if isinstance(exc, KafkaConnectionError) else KafkaConnectionError(str(exc)))
        except kproto.KprotoError as exc:
            self._fail_all(KafkaConnectionError(f"unreadable response from {self.host}:{self.port}: {exc}"))
        finally:  # also when the client's loop is cancelled: the fd must not wait for the GC
            self._close_socket(sock)

    async def _watchdog(self, closed: trio.Event) -> None:
        """Times out called-back requests: closes the connection when one is overdue.

        One task per connection, ticking at a quarter of the request timeout
        (at most 1 s), instead of a cancel scope per request; a timeout fires
        up to a tick late.
        """
        tick = min(1.0, max(0.01, self.request_timeout_s / 4))
        while True:
            with trio.move_on_after(tick):
                await closed.wait()
            if closed.is_set():
                return
            now = trio.current_time()
            if any(p.deadline <= now for p in self._pending.values()):
                self._fail_all(
                    KafkaTimeoutError(
                        f"no response from {self.host}:{self.port} within {self.request_timeout_s:.1f}s"
                    )
                )
                self._close_socket()
                return

    def _deliver(self, frame: bytes) -> None:
        correlation_id = int.from_bytes(frame[4:8], "big", signed=True)
        pending = self._pending.pop(correlation_id, None)
        if pending is None:
            raise KafkaConnectionError(f"response with unknown correlation id {correlation_id}")
        try:
            if pending.decode is not None:
                pending.response = pending.decode(frame)
            else:
                pending.response = kproto.decode_response(pending.api_key, pending.version, frame).body
        except kproto.KprotoError as exc:
            pending.error = exc
        pending.finish()

    def _fail_all(self, exc: BaseException) -> None:
        if self.error is None:
            self.error = exc
        self._closed.set()
        failed, self._pending = self._pending, {}
        for pending in failed.values():
            pending.error = exc
            pending.finish()

    async def send(
        self, api_key: int, version: int, body: dict[str, Any], *, expect_response: bool = True
    ) -> _Pending | None:
        """Write a request; returns the handle to wait on (None when no response is expected)."""
        client_id = self.client_id

        def encode(correlation_id: int) -> bytes:
            return kproto.encode_request(api_key, version, correlation_id, body, client_id=client_id)

        return await self.send_encoded(api_key, version, encode, expect_response=expect_response)

    async def send_encoded(
        self,
        api_key: int,
        version: int,
        encode: Callable[[int], bytes],
        *,
        decode: Callable[[bytes], Any] | None = None,
        expect_response: bool = True,
        on_response: OnResponse | None = None,
    ) -> _Pending | None:
        """:meth:`send` for a request framed by the caller: ``encode(correlation_id)``
        returns the whole frame, ``decode(frame)`` (default: the grammar) reads the
        response.  The producer's struct fast path (:mod:`kproto.produce_fast`) uses it.

        With ``on_response`` nothing is returned to wait on: the reader calls
        ``on_response(response, None)``, or ``(None, error)`` when the connection
        fails or the request times out (``request_timeout_s``); exactly once.
        """
        sock = self._sock
        if self.closed or sock is None:
            raise KafkaConnectionError(f"connection to {self.host}:{self.port} is closed") from self.error
        correlation_id = next(self._ids)
        frame = encode(correlation_id)
        pending = None
        if expect_response:
            deadline = float("inf")
            if on_response is not None:
                deadline = trio.current_time() + self.request_timeout_s
            pending = _Pending(api_key, version, decode, on_response, deadline)
            self._pending[correlation_id] = pending
        try:
            sent = 0
            if not self._send_lock.locked():  # nothing queued ahead: try the kernel at once
                try:
                    sent = sock.send(frame)
                except (BlockingIOError, ssl.SSLWantWriteError, ssl.SSLWantReadError):
                    sent = 0
            if sent < len(frame):
                async with self._send_lock:
                    await self._send_rest(sock, memoryview(frame)[sent:])
        except (trio.ClosedResourceError, OSError) as exc:
            error = KafkaConnectionError(f"sending to {self.host}:{self.port} failed: {exc}")
            if pending is not None and on_response is not None:
                self._pending.pop(correlation_id, None)  # raised, so not called back too
            self._fail_all(error)
            self._close_socket()
            raise error from exc
        return None if on_response is not None else pending

    @staticmethod
    async def _send_rest(sock: socket.socket, view: memoryview) -> None:
        while view:
            try:
                view = view[sock.send(view) :]
            except (BlockingIOError, ssl.SSLWantWriteError):
                await trio.lowlevel.wait_writable(sock)
            except ssl.SSLWantReadError:  # TLS wants the peer's bytes first (the reader takes them)
                await trio.sleep(0.001)

    async def wait(self, pending: _Pending, timeout_s: float | None = None) -> Any:
        """The response body for a request :meth:`send` returned."""
        assert pending.done is not None, "a called-back request is not waited on"
        try:
            with trio.fail_after(self.request_timeout_s if timeout_s is None else timeout_s):
                await pending.done.wait()
        except trio.TooSlowError:
            raise KafkaTimeoutError(
                f"no response from {self.host}:{self.port} within {self.request_timeout_s:.1f}s"
            ) from None
        if pending.error is not None:
            raise pending.error
        return pending.response

    async def request(
        self, api_key: int, version: int, body: dict[str, Any], timeout_s: float | None = None
    ) -> Any:
        pending = await self.send(api_key, version, body)
        assert pending is not None
        return await self.wait(pending, timeout_s)

    async def _reauthenticate(self, lifetime_ms: int, timeout_s: float) -> None:
        """KIP-368: authenticate again on this connection before the broker's session ends
        (at 85-95% of its lifetime, as Kafka's clients do); requests go on meanwhile."""
        while lifetime_ms > 0:
            with trio.move_on_after(lifetime_ms / 1000 * random.uniform(0.85, 0.95)):
                await self._closed.wait()
            if self.closed:
                return
            try:
                lifetime_ms = await self._authenticate(timeout_s)
            except KafkaError as exc:
                log.warning("re-authentication with %s:%d failed: %s", self.host, self.port, exc)
                self._fail_all(KafkaConnectionError(f"re-authentication failed: {exc}"))
                self._close_socket()
                return

    async def _authenticate(self, timeout_s: float) -> int:
        """SASL: SaslHandshake v1, then SaslAuthenticate until the mechanism is done.

        Returns the session lifetime the broker gave (ms; 0: no re-authentication)."""
        security = self.security
        assert security.sasl_plain_username is not None and security.sasl_plain_password is not None
        mechanism = security.sasl_mechanism
        handshake = await self.request(
            ApiKey.SASL_HANDSHAKE, 1, {"mechanism": mechanism}, timeout_s=timeout_s
        )
        if handshake.error_code:
            offered = ", ".join(handshake.mechanisms)
            raise SaslAuthenticationFailedError(
                f"{self.host}:{self.port} does not offer {mechanism} (only {offered})"
            )
        version = self.pick(ApiKey.SASL_AUTHENTICATE, CLIENT_VERSIONS[ApiKey.SASL_AUTHENTICATE])
        client = client_for(mechanism, security.sasl_plain_username, security.sasl_plain_password)
        token: bytes | None = client.first()
        lifetime_ms = 0
        while token is not None:
            body = {"auth_bytes": token}
            answer = await self.request(ApiKey.SASL_AUTHENTICATE, version, body, timeout_s=timeout_s)
            if answer.error_code:
                raise SaslAuthenticationFailedError(f"{self.host}:{self.port}: {answer.error_message}")
            lifetime_ms = int(answer.get("session_lifetime_ms", 0))
            try:
                token = client.answer(bytes(answer.auth_bytes))
            except SaslError as exc:
                raise SaslAuthenticationFailedError(f"{self.host}:{self.port}: {exc}") from None
        return lifetime_ms

    async def aclose(self) -> None:
        self._fail_all(KafkaConnectionError("connection closed by the client"))
        self._close_socket()
        await trio.lowlevel.checkpoint()
