"""What the client knows of the cluster: brokers, topics, leaders, and the connections.

Bootstrap tries each ``host:port`` in turn until one answers Metadata; the
cache is refreshed when a request fails with a leader or topic error
(``refresh_needed``), never on a timer alone.  Connections to a node are
made on demand and re-made after a failure with exponential backoff
(``reconnect_backoff_ms`` .. ``reconnect_backoff_max_ms``), as Kafka's
clients do.

Metadata and FindCoordinator are sent at the highest version the broker and
this client share (:meth:`BrokerConnection.pick`): v0 against a 0.8 broker,
where an empty topic list means "all topics" and naming a topic may create
it; from v1 "all" is a null list, and from v4 the request says whether the
broker may auto-create the topics it names (producers and consumers allow it,
as Kafka's do by default; the admin client does not).
"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass, field
from typing import Protocol

import trio

from hmb_client.connection import BrokerConnection
from hmb_client.errors import (
    KafkaConnectionError,
    KafkaTimeoutError,
    NoBrokersAvailable,
    error_for,
)
from hmb_client.security import SecuritySettings, security_of
from kproto import ApiKey, ErrorCode

log = logging.getLogger(__name__)

NO_TOPIC_ID = bytes(16)
"""Metadata v10+ names a topic by id or by name; the all-zero id means "by name" (KIP-516)."""
FIND_COORDINATOR_BATCHED = 4
"""From this FindCoordinator version the keys go in a batch and each is answered on its own."""


def parse_bootstrap(servers: str | list[str] | tuple[str, ...]) -> list[tuple[str, int]]:
    """``"h1:9092,h2:9092"`` or a list of ``host[:port]`` -> [(host, port)]."""
    items = servers.split(",") if isinstance(servers, str) else list(servers)
    out = []
    for item in items:
        item = item.strip()
        if not item:
            continue
        host, sep, port = item.rpartition(":")
        if not sep:
            host, port = item, "9092"
        if not port.isdigit():
            raise ValueError(f"bad bootstrap server {item!r}: expected host:port")
        out.append((host.strip("[]"), int(port)))
    if not out:
        raise ValueError("bootstrap_servers is empty")
    return out


@dataclass(frozen=True)
class Replicas:
    """Where a partition lives: every replica, the in-sync ones, the ones whose broker is down."""

    replicas: tuple[int, ...] = ()
    isr: tuple[int, ...] = ()
    offline: tuple[int, ...] = ()


@dataclass
class TopicInfo:
    name: str
    leaders: list[int]  # leader node per partition (-1: none)
    error: int = 0
    internal: bool = False  # Metadata v1+ says so; v0 brokers do not (names starting "__" are)
    topic_id: bytes = NO_TOPIC_ID  # Metadata v10+ (KIP-516); all zeros: not known
    #: per partition: its replicas, in-sync replicas and offline replicas (v5+), as Metadata says
    replicas: list[Replicas] = field(default_factory=list)

    @property
    def partitions(self) -> int:
        return len(self.leaders)


@dataclass
class ClusterConfig:
    bootstrap: list[tuple[str, int]]
    client_id: str = "hmb-client"
    request_timeout_s: float = 30.0
    connect_timeout_s: float = 10.0
    reconnect_backoff_s: float = 0.05
    reconnect_backoff_max_s: float = 1.0
    metadata_max_age_s: float = 300.0
    api_version_request: bool = True  # False: no ApiVersions, the 0.8.2 table (see uses_api_versions)
    security: SecuritySettings = field(default_factory=SecuritySettings)


class ClientSettings(Protocol):
    """The connection settings producer and consumer configs share (kafka-python names)."""

    @property
    def bootstrap_servers(self) -> str | list[str]: ...
    @property
    def client_id(self) -> str: ...
    @property
    def request_timeout_ms(self) -> int: ...
    @property
    def reconnect_backoff_ms(self) -> int: ...
    @property
    def reconnect_backoff_max_ms(self) -> int: ...
    @property
    def api_version(self) -> tuple[int, ...] | None: ...


def uses_api_versions(api_version: tuple[int, ...] | None) -> bool:
    """kafka-python's ``api_version`` setting: None (ask each broker with ApiVersions) or the
    broker release to assume; one before 0.10 means the 0.8.2 table without asking."""
    return api_version is None or tuple(api_version) >= (0, 10)


def cluster_config_of(cfg: ClientSettings) -> ClusterConfig:
    """The cluster settings of a producer or consumer config."""
    return ClusterConfig(
        bootstrap=parse_bootstrap(cfg.bootstrap_servers),
        client_id=cfg.client_id,
        request_timeout_s=cfg.request_timeout_ms / 1000,
        reconnect_backoff_s=cfg.reconnect_backoff_ms / 1000,
        reconnect_backoff_max_s=cfg.reconnect_backoff_max_ms / 1000,
        api_version_request=uses_api_versions(cfg.api_version),
        security=security_of(cfg),
    )


@dataclass
class _NodeState:
    conn: BrokerConnection | None = None
    #: the broker answered ApiVersions once: it is never taken for a 0.8 broker later
    negotiated: bool = False
    failures: int = 0
    next_attempt: float = 0.0
    lock: trio.Lock = field(default_factory=trio.Lock)


class Cluster:
    """Metadata cache and connection pool; lives in the client's I/O thread."""

    def __init__(self, config: ClusterConfig, nursery: trio.Nursery) -> None:
        self.config = config
        self.nursery = nursery
        self.nodes: dict[int, tuple[str, int]] = {}
        self.topics: dict[str, TopicInfo] = {}
        self._states: dict[object, _NodeState] = {}
        self._refreshed_at = -1e9
        self._refresh_lock = trio.Lock()
        #: the controller's node id (Metadata v1+; -1 unknown): where CreateTopics goes
        self.controller = -1

    # ---------------------------------------------------------------- connections

    async def connection(self, node: int | tuple[str, int]) -> BrokerConnection:
        """An open connection to a node id (from metadata) or a bootstrap address."""
        if isinstance(node, int):
            if node not in self.nodes:
                await self.refresh()
            if node not in self.nodes:
                raise KafkaConnectionError(f"broker {node} is not in the cluster metadata")
            address = self.nodes[node]
        else:
            address = node
        state = self._states.setdefault(address, _NodeState())
        open_conn = state.conn
        if open_conn is not None and not open_conn.closed:
            return open_conn  # the usual case, without the lock (whose acquire is a checkpoint)
        async with state.lock:
            if state.conn is not None and not state.conn.closed:
                return state.conn
            wait = state.next_attempt - trio.current_time()
            if wait > 0:
                await trio.sleep(wait)  # reconnect backoff, not synchronisation
            conn = BrokerConnection(
                address[0],
                address[1],
                client_id=self.config.client_id,
                request_timeout_s=self.config.request_timeout_s,
                api_version_request=self.config.api_version_request,
                security=self.config.security,
            )
            try:
                timeout = self.config.connect_timeout_s
                await conn.open(self.nursery, timeout, allow_legacy=not state.negotiated)
            except KafkaConnectionError:
                state.failures += 1
                backoff = min(
                    self.config.reconnect_backoff_max_s,
                    self.config.reconnect_backoff_s * 2 ** (state.failures - 1),
                )
                state.next_attempt = trio.current_time() + backoff * random.uniform(0.8, 1.2)
                raise
            state.failures = 0
            state.negotiated = state.negotiated or conn.negotiated
            state.conn = conn
            return conn

    async def any_connection(self, deadline_s: float | None = None) -> BrokerConnection:
        """A connection to any known broker (metadata nodes first, then bootstrap)."""
        candidates: list[int | tuple[str, int]] = [*self.nodes.keys(), *self.config.bootstrap]
        errors = []
        with trio.move_on_after(deadline_s if deadline_s is not None else self.config.connect_timeout_s * 3):
            while True:
                for node in candidates:
                    try:
                        return await self.connection(node)
                    except KafkaConnectionError as exc:
                        errors.append(str(exc))
                await trio.sleep(self.config.reconnect_backoff_s)
        servers = ", ".join(f"{h}:{p}" for h, p in self.config.bootstrap)
        last = errors[-1] if errors else "timeout"
        raise NoBrokersAvailable(f"no broker reachable (bootstrap_servers={servers}); last error: {last}")

    async def close(self) -> None:
        for state in self._states.values():
            if state.conn is not None:
                await state.conn.aclose()

    # ---------------------------------------------------------------- metadata

    async def refresh(
        self,
        topics: list[str] | None = None,
        *,
        deadline_s: float | None = None,
        allow_auto_create: bool = True,
    ) -> None:
        """Fetch metadata (all topics when ``topics`` is None) and update the cache.

        Naming a topic that does not exist may create it when the broker
        auto-creates topics; from Metadata v4 only if ``allow_auto_create``
        (older versions cannot say no, which is how 0.8 clients created topics).
        """
        async with self._refresh_lock:
            conn = await self.any_connection(deadline_s)
            names = None if topics is None else sorted(set(topics))
            if names is not None and not names:
                return
            version = conn.pick(ApiKey.METADATA)
            wanted: list[dict[str, str | bytes]] | None
            if names is None:
                wanted = None if version >= 1 else []  # "all topics": null from v1, empty in v0
            else:  # v10+ may name a topic by id instead: the zero id means "by name"
                wanted = [{"topic_id": NO_TOPIC_ID, "name": n} for n in names]
            request = {
                "topics": wanted,
                "allow_auto_topic_creation": allow_auto_create,
                "include_cluster_authorized_operations": False,
                "include_topic_authorized_operations": False,
            }
            try:
                body = await conn.request(ApiKey.METADATA, version, request)
            except (KafkaConnectionError, KafkaTimeoutError):
                await conn.aclose()
                raise
            if version >= 13 and body.error_code:  # v13+: a request-wide error (e.g. authorisation)
                raise error_for(body.error_code)("fetching metadata")
            self.nodes = {b.node_id: (b.host, b.port) for b in body.brokers}
            self.controller = body.controller_id if version >= 1 else -1
            for t in body.topics:
                internal = bool(t.is_internal) if version >= 1 else t.name.startswith("__")
                if t.error_code:
                    self.topics.pop(t.name, None)
                    self.topics[t.name] = TopicInfo(t.name, [], t.error_code, internal)
                    continue
                leaders = [-1] * len(t.partitions)
                replicas = [Replicas()] * len(t.partitions)
                for p in t.partitions:
                    if 0 <= p.partition_index < len(leaders):
                        leaders[p.partition_index] = p.leader_id if not p.error_code else -1
                        offline = tuple(p.offline_replicas) if version >= 5 else ()
                        replicas[p.partition_index] = Replicas(
                            tuple(p.replica_nodes), tuple(p.isr_nodes), offline
                        )
                topic_id = bytes(t.topic_id) if version >= 10 else NO_TOPIC_ID
                self.topics[t.name] = TopicInfo(t.name, leaders, 0, internal, topic_id, replicas)
            if topics is None:
                known = {t.name for t in body.topics}
                for name in list(self.topics):
                    if name not in known:
                        del self.topics[name]
            self._refreshed_at = trio.current_time()

    async def topic(self, name: str, *, timeout_s: float, allow_auto_create: bool = True) -> TopicInfo:
        """Partitions and leaders of ``name``, waiting while it is being created.

        Raises the topic's error (e.g. UnknownTopicOrPartitionError) once
        ``timeout_s`` has passed without it becoming available.
        """
        info = self.topics.get(name)
        if info is not None and not info.error and info.partitions and all(x >= 0 for x in info.leaders):
            return info
        deadline = trio.current_time() + timeout_s
        delay = 0.02
        while True:
            await self.refresh(
                [name],
                deadline_s=max(0.1, deadline - trio.current_time()),
                allow_auto_create=allow_auto_create,
            )
            info = self.topics.get(name)
            if info is not None and not info.error and info.partitions and all(x >= 0 for x in info.leaders):
                return info
            retriable = info is None or error_for(info.error).retriable or info.error == ErrorCode.NONE
            if not retriable or trio.current_time() + delay > deadline:
                code = info.error if info is not None and info.error else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                raise error_for(code)(f"topic {name!r} not available after {timeout_s:.1f}s")
            await trio.sleep(delay)  # backoff between metadata retries
            delay = min(delay * 2, 0.5)

    async def leader(self, topic: str, partition: int, *, timeout_s: float) -> int:
        info = await self.topic(topic, timeout_s=timeout_s)
        if not 0 <= partition < info.partitions:
            raise error_for(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)(
                f"{topic} has {info.partitions} partitions, there is no partition {partition}"
            )
        return info.leaders[partition]

    def invalidate(self, topic: str) -> None:
        """Forget a topic's leaders after a leader/topic error so the next use refreshes."""
        self.topics.pop(topic, None)

    async def coordinator(self, group_id: str) -> BrokerConnection:
        """The connection to ``group_id``'s coordinator.

        FindCoordinator at the negotiated version (v0 is 0.8.2's
        GroupCoordinator; v1+ add the key type, 0 = group, and an error message;
        v4+ ask for a batch of keys, here of one, and answer each on its own).
        """
        conn = await self.any_connection()
        version = conn.pick(ApiKey.FIND_COORDINATOR)
        request = {"key": group_id, "key_type": 0, "coordinator_keys": [group_id]}
        body = await conn.request(ApiKey.FIND_COORDINATOR, version, request)
        if version >= FIND_COORDINATOR_BATCHED:
            body = next((c for c in body.coordinators if c.key == group_id), None)
            if body is None:
                raise error_for(ErrorCode.COORDINATOR_NOT_AVAILABLE)(f"no answer for group {group_id!r}")
        if body.error_code:
            detail = getattr(body, "error_message", None) or ""
            raise error_for(body.error_code)(f"no coordinator for group {group_id!r} {detail}".rstrip())
        self.nodes.setdefault(body.node_id, (body.host, body.port))
        return await self.connection(body.node_id)
