"""The admin client: create, delete, list and describe topics.

It uses the proper admin APIs when the broker offers them, and otherwise
builds them from what Kafka 0.8 offers (the way 0.8's own tools did):

* **create**: CreateTopics (Kafka 0.10.1+; v4+ lets the broker choose the
  partition count and replication when not given) sent to the controller.
  Without it, Metadata v0 naming an unknown topic makes the broker create it
  (``auto.create.topics.enable``) with the broker's ``num.partitions``; that
  count cannot be chosen, so asking for another one is an error
  (:class:`PartitionCountMismatchError`) rather than a silent surprise.
* **delete**: DeleteTopics (0.10.1+); a broker without it cannot delete.
* **list / describe**: Metadata for names and leaders (v1+ marks internal
  topics; from v4 it is told never to auto-create), then ListOffsets sent to
  each partition's leader, once for the earliest (-2) and once for the
  latest (-1) offset.

Internal topics (``is_internal`` from Metadata v1, else names starting
``__``, e.g. ``__consumer_offsets``) are left out unless asked for.  A
Metadata request for all topics may not include them (hmb hides them; Kafka
lists them), and naming an unknown topic in Metadata v0-v3 may create it,
so an internal topic is named only after a ListOffsets probe has shown that
it exists.

Every method blocks the calling thread; the network work runs in the
client's I/O thread (:mod:`hmb_client.runtime`).
"""

from __future__ import annotations

import logging
from typing import Any, NamedTuple

import trio

from hmb_client import acls
from hmb_client.acls import AclBinding, AclFilter
from hmb_client.cluster import Cluster, ClusterConfig, TopicInfo, parse_bootstrap, uses_api_versions
from hmb_client.connection import BrokerConnection
from hmb_client.errors import KafkaError, UnsupportedVersionError, error_for
from hmb_client.request_bodies import list_offsets_body
from hmb_client.runtime import IoThread
from hmb_client.security import SecuritySettings
from hmb_client.structs import TopicPartition
from kproto import ApiKey, ErrorCode
from kproto.messages.list_offsets import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP

log = logging.getLogger(__name__)

#: Internal topics probed for when ``include_internal=True`` and the broker does not list them.
KNOWN_INTERNAL_TOPICS = ("__consumer_offsets", "__transaction_state")

TopicAlreadyExistsError = error_for(ErrorCode.TOPIC_ALREADY_EXISTS)
UnknownTopicOrPartitionError = error_for(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)


class PartitionCountMismatchError(KafkaError):
    """A topic was created with a partition count other than the one asked for.

    The topic exists afterwards (with ``actual`` partitions): Metadata-based
    creation cannot choose the count (used when the broker offers no
    CreateTopics, or only v0-3 and no count was asked for).
    """

    def __init__(self, topic: str, requested: int, actual: int) -> None:
        self.topic = topic
        self.requested = requested
        self.actual = actual
        super().__init__(
            f"topic {topic!r} was created with {actual} partition(s), not {requested}: this broker "
            f"creates topics with its num.partitions setting and does not offer CreateTopics; "
            f"start it with --override num.partitions={requested} to get {requested}"
        )


class PartitionDescription(NamedTuple):
    """One partition: its leader's node id and its offset range (-1 when unknown)."""

    partition: int
    leader: int
    earliest_offset: int
    latest_offset: int

    @property
    def messages(self) -> int:
        """How many messages the partition holds (latest - earliest)."""
        if self.earliest_offset < 0 or self.latest_offset < 0:
            return 0
        return self.latest_offset - self.earliest_offset


class TopicDescription(NamedTuple):
    name: str
    partitions: list[PartitionDescription]

    @property
    def messages(self) -> int:
        return sum(p.messages for p in self.partitions)


def is_internal(topic: str) -> bool:
    return topic.startswith("__")


class Admin:
    """Topic administration.  ``with Admin("127.0.0.1:9092") as admin: admin.list_topics()``.

    ``request_timeout_ms`` bounds every request and also how long a call
    keeps trying to reach a bootstrap server before raising
    :class:`~hmb_client.errors.NoBrokersAvailable`.  ``api_version``
    (kafka-python's setting): None asks each broker what it serves; a
    release before 0.10, e.g. ``(0, 8, 2)``, skips ApiVersions and uses
    Kafka 0.8.2's APIs only (Metadata auto-creation, no CreateTopics).
    """

    def __init__(
        self,
        bootstrap_servers: str | list[str] = "127.0.0.1:9092",
        client_id: str = "hmb-admin",
        request_timeout_ms: int = 30_000,
        api_version: tuple[int, ...] | None = None,
        **security: Any,
    ) -> None:
        """``security``: kafka-python's TLS and SASL settings (:mod:`hmb_client.security`)."""
        if request_timeout_ms <= 0:
            raise ValueError("request_timeout_ms must be positive")
        self._timeout_s = request_timeout_ms / 1000
        self._config = ClusterConfig(
            bootstrap=parse_bootstrap(bootstrap_servers),
            client_id=client_id,
            request_timeout_s=self._timeout_s,
            connect_timeout_s=min(10.0, self._timeout_s),
            api_version_request=uses_api_versions(api_version),
            security=SecuritySettings(**security),
        )
        self._closed = False
        self._io = IoThread("hmb-admin-io")
        try:
            self._cluster: Cluster = self._io.run(self._start)
        except BaseException:
            self._io.close()
            raise

    async def _start(self) -> Cluster:
        assert self._io.nursery is not None
        return Cluster(self._config, self._io.nursery)

    def __enter__(self) -> Admin:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connections and stop the I/O thread (idempotent)."""
        if self._closed:
            return
        self._closed = True
        try:
            self._io.run(self._cluster.close)
        except RuntimeError:
            pass
        self._io.close()

    # ---------------------------------------------------------------- public API

    def create_topic(
        self, name: str, num_partitions: int | None = None, timeout_s: float = 30
    ) -> TopicDescription:
        """Create ``name`` and wait until every partition has a leader.

        Raises ``TopicAlreadyExistsError`` if it exists, and
        :class:`PartitionCountMismatchError` if ``num_partitions`` is given and
        the broker created another count.
        """
        if num_partitions is not None and num_partitions < 1:
            raise ValueError("num_partitions must be at least 1")
        return self._run(self._create, name, num_partitions, timeout_s)

    def delete_topic(self, name: str, timeout_s: float = 30) -> None:
        """Delete ``name`` (DeleteTopics); UnsupportedVersionError if the broker cannot."""
        self._run(self._delete, name, timeout_s)

    def list_topics(self, include_internal: bool = False) -> dict[str, TopicDescription]:
        """Every topic, described (leaders and offsets), by name."""
        return self._run(self._list, include_internal)

    def describe_topic(self, name: str) -> TopicDescription:
        """Partitions, leaders and offsets of an existing topic (never creates it)."""
        return self._run(self._describe_one, name)

    def topic_names(self, include_internal: bool = False) -> set[str]:
        """The topic names only (one Metadata request; cheaper than :meth:`list_topics`)."""
        return self._run(self._names, include_internal)

    # ---------------------------------------------------------------- ACLs and SCRAM users

    def create_acls(self, bindings: list[AclBinding]) -> None:
        self._run(self._on_controller, acls.create_acls, bindings)

    def describe_acls(self, selection: AclFilter | None = None) -> list[AclBinding]:
        return self._run(self._on_controller, acls.describe_acls, selection or AclFilter())

    def delete_acls(self, selection: AclFilter) -> list[AclBinding]:
        """Remove what ``selection`` matches; the bindings removed."""
        return self._run(self._on_controller, acls.delete_acls, selection)

    def describe_user_scram_credentials(
        self, users: list[str] | None = None
    ) -> dict[str, list[tuple[str, int]]]:
        """user -> [(mechanism, iterations)] (every user with credentials when ``users`` is None)."""
        return self._run(self._on_controller, acls.describe_scram, users)

    def upsert_user_scram_credential(
        self, user: str, mechanism: str, password: str, iterations: int = 4096
    ) -> None:
        """Add or replace ``user``'s credential (the password is salted and hashed here)."""
        self._run(self._on_controller, acls.alter_scram, [(user, mechanism, password, iterations)], [])

    def delete_user_scram_credential(self, user: str, mechanism: str) -> None:
        self._run(self._on_controller, acls.alter_scram, [], [(user, mechanism)])

    async def _on_controller(self, afn: Any, *args: Any) -> Any:
        return await afn(await self._controller(), *args)

    # ---------------------------------------------------------------- I/O thread side

    def _run(self, afn: Any, *args: Any) -> Any:
        if self._closed:
            raise RuntimeError("the admin client is closed")
        return self._io.run(afn, *args)

    async def _names(self, include_internal: bool) -> set[str]:
        await self._cluster.refresh(None, deadline_s=self._timeout_s, allow_auto_create=False)
        topics = self._cluster.topics
        names = {n for n, info in topics.items() if not info.error}
        if not include_internal:
            return {n for n in names if not (topics[n].internal or is_internal(n))}
        for internal in KNOWN_INTERNAL_TOPICS:
            if internal not in names and await self._probe(internal):
                names.add(internal)
        return names

    async def _probe(self, topic: str) -> bool:
        """Whether ``topic`` exists, asked without creating it.

        Metadata v4+ can name it with auto-creation off; before that a
        ListOffsets for partition 0 is the only question that cannot create it.
        """
        conn = await self._cluster.any_connection(self._timeout_s)
        if conn.pick(ApiKey.METADATA) >= 4:
            await self._cluster.refresh([topic], deadline_s=self._timeout_s, allow_auto_create=False)
            info = self._cluster.topics.get(topic)
            # exists: no error, or a passing one (no leader yet); INVALID_TOPIC and the like: no
            if info is None or info.error == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
                return False
            return not info.error or error_for(info.error).retriable
        version = conn.pick(ApiKey.LIST_OFFSETS)
        body = await conn.request(
            ApiKey.LIST_OFFSETS, version, list_offsets_body({TopicPartition(topic, 0): LATEST_TIMESTAMP})
        )
        codes = [p.error_code for t in body.topics for p in t.partitions]
        # NOT_LEADER_OR_FOLLOWER and the like still mean the topic exists (on another broker).
        return bool(codes) and codes[0] != ErrorCode.UNKNOWN_TOPIC_OR_PARTITION

    async def _exists(self, name: str) -> bool:
        await self._cluster.refresh(None, deadline_s=self._timeout_s, allow_auto_create=False)
        info = self._cluster.topics.get(name)
        if info is not None and not info.error:
            return True
        return await self._probe(name)

    async def _create(self, name: str, num_partitions: int | None, timeout_s: float) -> TopicDescription:
        if await self._exists(name):
            raise TopicAlreadyExistsError(f"topic {name!r} already exists")
        conn = await self._controller()
        if conn.supports(ApiKey.CREATE_TOPICS) and (
            num_partitions is not None or conn.pick(ApiKey.CREATE_TOPICS) >= 4
        ):
            await self._create_topics(conn, name, num_partitions, timeout_s)
        else:
            await self._cluster.refresh([name], deadline_s=self._timeout_s)
            info = self._cluster.topics.get(name)
            if info is not None and info.error == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
                # Kafka 0.8 answers LEADER_NOT_AVAILABLE while it creates a topic; "unknown"
                # means it will not create it.
                raise UnknownTopicOrPartitionError(
                    f"the broker did not create topic {name!r}: it does not auto-create topics "
                    "(auto.create.topics.enable=false) and does not offer CreateTopics"
                )
            if info is not None and info.error and not error_for(info.error).retriable:
                raise error_for(info.error)(f"creating topic {name!r}")
        info = await self._cluster.topic(name, timeout_s=timeout_s, allow_auto_create=False)
        if num_partitions is not None and info.partitions != num_partitions:
            raise PartitionCountMismatchError(name, num_partitions, info.partitions)
        return (await self._describe([info]))[name]

    async def _controller(self) -> BrokerConnection:
        """The controller (where CreateTopics/DeleteTopics go), else any broker (Kafka 0.8)."""
        if self._cluster.controller < 0:
            await self._cluster.refresh(None, deadline_s=self._timeout_s, allow_auto_create=False)
        if self._cluster.controller >= 0:
            return await self._cluster.connection(self._cluster.controller)
        return await self._cluster.any_connection(self._timeout_s)

    async def _create_topics(
        self, conn: BrokerConnection, name: str, num_partitions: int | None, timeout_s: float
    ) -> None:
        """CreateTopics; from v4 -1 leaves the partition count and replication to the broker."""
        version = conn.pick(ApiKey.CREATE_TOPICS)
        topic = {
            "name": name,
            "num_partitions": -1 if num_partitions is None else num_partitions,
            "replication_factor": -1 if version >= 4 else 1,
            "assignments": [],
            "configs": [],
        }
        body = await conn.request(
            ApiKey.CREATE_TOPICS,
            version,
            {"topics": [topic], "timeout_ms": int(timeout_s * 1000), "validate_only": False},
        )
        for t in body.topics:
            if t.error_code:
                detail = getattr(t, "error_message", None) or f"creating topic {name!r}"
                raise error_for(t.error_code)(detail)

    async def _delete(self, name: str, timeout_s: float) -> None:
        conn = await self._controller()
        if not conn.supports(ApiKey.DELETE_TOPICS):
            raise UnsupportedVersionError(
                f"{conn.host}:{conn.port} does not offer DeleteTopics (a Kafka 0.8-style broker): "
                "topics cannot be deleted through the protocol"
            )
        version = conn.pick(ApiKey.DELETE_TOPICS)
        body = await conn.request(
            ApiKey.DELETE_TOPICS, version, {"topic_names": [name], "timeout_ms": int(timeout_s * 1000)}
        )
        self._cluster.invalidate(name)
        for r in body.responses:
            if r.error_code:
                raise error_for(r.error_code)(f"deleting topic {name!r}")

    async def _list(self, include_internal: bool) -> dict[str, TopicDescription]:
        names = await self._names(include_internal)
        missing = [n for n in names if n not in self._cluster.topics]
        if missing:  # internal topics found by probing: now safe to name in Metadata
            await self._cluster.refresh(missing, deadline_s=self._timeout_s)
        infos = [self._cluster.topics[n] for n in sorted(names) if n in self._cluster.topics]
        return await self._describe(infos)

    async def _describe_one(self, name: str) -> TopicDescription:
        if not await self._exists(name):
            raise UnknownTopicOrPartitionError(f"topic {name!r} does not exist")
        await self._cluster.refresh([name], deadline_s=self._timeout_s, allow_auto_create=False)
        info = await self._cluster.topic(name, timeout_s=self._timeout_s, allow_auto_create=False)
        return (await self._describe([info]))[name]

    async def _describe(self, infos: list[TopicInfo]) -> dict[str, TopicDescription]:
        """Ask each leader for the earliest and latest offsets of its partitions."""
        by_leader: dict[int, dict[str, list[int]]] = {}
        for info in infos:
            for partition, leader in enumerate(info.leaders):
                if leader >= 0:
                    by_leader.setdefault(leader, {}).setdefault(info.name, []).append(partition)
        offsets: dict[tuple[str, int, int], int] = {}
        errors: list[KafkaError] = []

        async def ask(leader: int, partitions: dict[str, list[int]], timestamp: int) -> None:
            try:
                conn = await self._cluster.connection(leader)
                version = conn.pick(ApiKey.LIST_OFFSETS)
                wanted = {TopicPartition(t, p): timestamp for t, ps in partitions.items() for p in ps}
                request = list_offsets_body(wanted)
                body = await conn.request(ApiKey.LIST_OFFSETS, version, request)
            except KafkaError as exc:  # collected, so the caller sees the error and not a group
                errors.append(exc)
                return
            for t in body.topics:
                for p in t.partitions:
                    if p.error_code:
                        where = f"ListOffsets for {t.name}-{p.partition_index}"
                        errors.append(error_for(p.error_code)(where))
                    if version >= 1:
                        offsets[(t.name, p.partition_index, timestamp)] = p.offset
                    else:
                        found = list(p.old_style_offsets)
                        offsets[(t.name, p.partition_index, timestamp)] = found[0] if found else -1

        async with trio.open_nursery() as nursery:
            for leader, partitions in by_leader.items():
                for timestamp in (EARLIEST_TIMESTAMP, LATEST_TIMESTAMP):
                    nursery.start_soon(ask, leader, partitions, timestamp)
        if errors:
            raise errors[0]
        return {
            info.name: TopicDescription(
                info.name,
                [
                    PartitionDescription(
                        partition,
                        leader,
                        offsets.get((info.name, partition, EARLIEST_TIMESTAMP), -1),
                        offsets.get((info.name, partition, LATEST_TIMESTAMP), -1),
                    )
                    for partition, leader in enumerate(info.leaders)
                ],
            )
            for info in infos
        }
