"""The admin client: topics, configs, consumer groups, partitions' logs, the cluster.

Topics are this module's; configs and topic shape (CreateTopics with
configs, CreatePartitions) are :mod:`hmb_client.admin_configs`, groups
:mod:`hmb_client.admin_groups`, offsets, records, log directories and the
cluster :mod:`hmb_client.admin_log`; what they return is
:mod:`hmb_client.admin_types`.  For topics:

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

import functools
import logging
from typing import Any, NamedTuple

import trio

from hmb_client import acls, admin_configs, admin_groups, admin_log
from hmb_client.acls import AclBinding, AclFilter
from hmb_client.admin_types import (
    AlterConfigOp,
    ClusterDescription,
    ConfigEntry,
    ConfigResource,
    CreatedTopic,
    GroupDescription,
    GroupListing,
    ListOffsetsResult,
    LogDirDescription,
    NewTopic,
    Node,
    ProducerState,
)
from hmb_client.cluster import Cluster, ClusterConfig, Replicas, TopicInfo, parse_bootstrap, uses_api_versions
from hmb_client.connection import BrokerConnection
from hmb_client.errors import KafkaError, UnsupportedVersionError, error_for
from hmb_client.request_bodies import ISOLATION, list_offsets_body
from hmb_client.runtime import IoThread
from hmb_client.security import SecuritySettings
from hmb_client.structs import OffsetAndMetadata, TopicPartition
from kproto import ApiKey, ErrorCode
from kproto.messages.list_offsets import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP

log = logging.getLogger(__name__)

RETRY_BACKOFF_S = 0.1  # Kafka's retry.backoff.ms, between two tries of a retriable answer

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
    """One partition: its leader's node id, its offset range (-1 when unknown), and where its
    replicas are (all of them, the in-sync ones, the offline ones), as ``kafka-topics --describe``."""

    partition: int
    leader: int
    earliest_offset: int
    latest_offset: int
    replicas: tuple[int, ...] = ()
    isr: tuple[int, ...] = ()
    offline: tuple[int, ...] = ()

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


def _placement(info: TopicInfo, partition: int) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """A partition's replicas, in-sync replicas and offline replicas, as Metadata gave them."""
    where = info.replicas[partition] if partition < len(info.replicas) else Replicas()
    return where.replicas, where.isr, where.offline


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
        self,
        name: str,
        num_partitions: int | None = None,
        timeout_s: float = 30,
        configs: dict[str, str] | None = None,
    ) -> TopicDescription:
        """Create ``name`` and wait until every partition has a leader.

        Raises ``TopicAlreadyExistsError`` if it exists, and
        :class:`PartitionCountMismatchError` if ``num_partitions`` is given and
        the broker created another count.  ``configs`` (topic settings such as
        ``retention.ms``) need a broker with CreateTopics.
        """
        if num_partitions is not None and num_partitions < 1:
            raise ValueError("num_partitions must be at least 1")
        return self._run(self._create, name, num_partitions, timeout_s, dict(configs or {}))

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

    def brokers(self) -> list[Node]:
        """The brokers the cluster metadata lists, by id."""
        return self._run(self._brokers)

    # ---------------------------------------------------------------- configs and topic shape

    def describe_configs(
        self,
        resources: list[ConfigResource],
        include_synonyms: bool = True,
        include_documentation: bool = False,
    ) -> dict[ConfigResource, dict[str, ConfigEntry]]:
        """Each resource's settings (value, source, read-only, sensitive, synonyms), by name.

        ``ConfigResource.topic("orders")``, ``ConfigResource.broker(1)``, or
        ``ConfigResource.broker()`` for the cluster-wide broker default.
        """
        return self._run(
            admin_configs.describe_configs,
            self._cluster,
            resources,
            self._timeout_s,
            include_synonyms=include_synonyms,
            include_documentation=include_documentation,
        )

    def alter_configs(
        self, configs: dict[ConfigResource, dict[str, str | None]], validate_only: bool = False
    ) -> None:
        """AlterConfigs: each resource's dynamic settings are replaced by the given ones
        (settings left out return to their defaults; prefer :meth:`incremental_alter_configs`)."""
        self._run(
            admin_configs.alter_configs, self._cluster, configs, self._timeout_s, validate_only=validate_only
        )

    def incremental_alter_configs(
        self, changes: dict[ConfigResource, list[AlterConfigOp]], validate_only: bool = False
    ) -> None:
        """Set, delete (back to the default), append to or subtract from the named settings only."""
        self._run(
            admin_configs.incremental_alter_configs,
            self._cluster,
            changes,
            self._timeout_s,
            validate_only=validate_only,
        )

    def create_topics(
        self, new_topics: list[NewTopic], validate_only: bool = False, timeout_s: float = 30
    ) -> dict[str, CreatedTopic]:
        """CreateTopics with configs; ``validate_only`` checks without creating.

        Returns what the broker says it created (partitions, replication and
        every config from CreateTopics v5; -1 and {} before).
        """
        return self._run(self._create_many, new_topics, validate_only, timeout_s)

    def create_partitions(
        self, new_counts: dict[str, int], validate_only: bool = False, timeout_s: float = 30
    ) -> None:
        """Grow each topic to ``new_counts[topic]`` partitions (never fewer: INVALID_PARTITIONS)."""
        self._run(self._create_partitions, new_counts, validate_only, timeout_s)

    # ---------------------------------------------------------------- partitions' logs, the cluster

    def list_offsets(
        self, specs: dict[TopicPartition, int], isolation_level: str = "read_uncommitted"
    ) -> dict[TopicPartition, ListOffsetsResult]:
        """The offset of each partition at a time in ms or an :class:`~hmb_client.admin_types.OffsetSpec`
        (EARLIEST, LATEST, MAX_TIMESTAMP, ...)."""
        return self._run(
            admin_log.list_offsets, self._cluster, specs, self._timeout_s, ISOLATION[isolation_level]
        )

    def delete_records(
        self, before: dict[TopicPartition, int], timeout_s: float = 30
    ) -> dict[TopicPartition, int]:
        """Delete every record below ``before[tp]`` (-1: all, up to the high watermark).

        Returns each partition's new low watermark (its log start offset).
        """
        return self._run(admin_log.delete_records, self._cluster, before, timeout_s)

    def describe_producers(
        self, partitions: list[TopicPartition]
    ) -> dict[TopicPartition, list[ProducerState]]:
        """The idempotent and transactional producers each partition keeps state for."""
        return self._run(admin_log.describe_producers, self._cluster, partitions, self._timeout_s)

    def describe_log_dirs(self, broker_ids: list[int] | None = None) -> dict[int, list[LogDirDescription]]:
        """Log directories per broker (all brokers by default) and each partition's size in them."""
        return self._run(admin_log.describe_log_dirs, self._cluster, self._timeout_s, broker_ids)

    def describe_cluster(self) -> ClusterDescription:
        """The cluster id, the controller's id and every broker."""
        return self._run(admin_log.describe_cluster, self._cluster, self._timeout_s)

    # ---------------------------------------------------------------- consumer groups

    def list_consumer_groups(self, states: list[str] | None = None) -> list[GroupListing]:
        """Every group (id, protocol type, state), optionally only those in ``states``
        (Stable, Empty, PreparingRebalance, CompletingRebalance, Dead; any case)."""
        return self._run(admin_groups.list_groups, self._cluster, self._timeout_s, states)

    def describe_consumer_groups(self, group_ids: list[str]) -> dict[str, GroupDescription]:
        """State, assignor and members (client, host, assigned partitions) of each group."""
        return self._run(admin_groups.describe_groups, self._cluster, group_ids)

    def list_consumer_group_offsets(
        self, group_id: str, partitions: list[TopicPartition] | None = None
    ) -> dict[TopicPartition, OffsetAndMetadata]:
        """The group's committed offsets (of every partition it has one for, or of ``partitions``)."""
        return self._run(admin_groups.group_offsets, self._cluster, group_id, self._timeout_s, partitions)

    def alter_consumer_group_offsets(
        self, group_id: str, offsets: dict[TopicPartition, OffsetAndMetadata | int]
    ) -> None:
        """Commit ``offsets`` for the group; it must have no active members (as Kafka's tools require)."""
        wanted = {
            tp: o if isinstance(o, OffsetAndMetadata) else OffsetAndMetadata(o) for tp, o in offsets.items()
        }
        self._run(admin_groups.alter_group_offsets, self._cluster, group_id, wanted)

    def delete_consumer_groups(self, group_ids: list[str]) -> None:
        """Delete empty groups and their committed offsets (GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP raise)."""
        self._run(admin_groups.delete_groups, self._cluster, group_ids)

    def delete_consumer_group_offsets(self, group_id: str, partitions: list[TopicPartition]) -> None:
        """Forget the group's committed offsets of ``partitions`` (not of topics it is subscribed to)."""
        self._run(admin_groups.delete_group_offsets, self._cluster, group_id, partitions)

    # ---------------------------------------------------------------- I/O thread side

    def _run(self, afn: Any, *args: Any, **kwargs: Any) -> Any:
        if self._closed:
            raise RuntimeError("the admin client is closed")
        return self._io.run(functools.partial(afn, **kwargs) if kwargs else afn, *args)

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

    async def _create(
        self, name: str, num_partitions: int | None, timeout_s: float, configs: dict[str, str]
    ) -> TopicDescription:
        if await self._exists(name):
            raise TopicAlreadyExistsError(f"topic {name!r} already exists")
        conn = await self._controller()
        if configs and not conn.supports(ApiKey.CREATE_TOPICS):
            raise UnsupportedVersionError(
                f"{conn.host}:{conn.port} does not offer CreateTopics, so a topic cannot be created "
                "with configs; create it without them"
            )
        if conn.supports(ApiKey.CREATE_TOPICS) and (
            num_partitions is not None or configs or conn.pick(ApiKey.CREATE_TOPICS) >= 4
        ):
            count = -1 if num_partitions is None else num_partitions
            await admin_configs.create_topics(conn, [NewTopic(name, count, -1, configs)], timeout_s)
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
        deadline = trio.current_time() + timeout_s
        info = await self._cluster.topic(name, timeout_s=timeout_s, allow_auto_create=False)
        if num_partitions is not None and info.partitions != num_partitions:
            raise PartitionCountMismatchError(name, num_partitions, info.partitions)
        while True:
            try:
                return (await self._describe([info]))[name]
            except KafkaError as exc:
                # a new topic's leaders may still be taking over (NOT_LEADER_OR_FOLLOWER in a
                # cluster): ask for the metadata again and retry, as Kafka's clients do
                if not exc.retriable or trio.current_time() >= deadline:
                    raise
            await trio.sleep(RETRY_BACKOFF_S)  # a client's retry backoff, not a synchronisation
            await self._cluster.refresh(
                [name], deadline_s=max(deadline - trio.current_time(), 0.1), allow_auto_create=False
            )
            info = self._cluster.topics.get(name) or info

    async def _controller(self) -> BrokerConnection:
        """The controller (where CreateTopics/DeleteTopics go), else any broker (Kafka 0.8)."""
        if self._cluster.controller < 0:
            await self._cluster.refresh(None, deadline_s=self._timeout_s, allow_auto_create=False)
        if self._cluster.controller >= 0:
            return await self._cluster.connection(self._cluster.controller)
        return await self._cluster.any_connection(self._timeout_s)

    async def _brokers(self) -> list[Node]:
        await self._cluster.refresh(None, deadline_s=self._timeout_s, allow_auto_create=False)
        return [Node(n, host, port) for n, (host, port) in sorted(self._cluster.nodes.items())]

    async def _create_many(
        self, new_topics: list[NewTopic], validate_only: bool, timeout_s: float
    ) -> dict[str, CreatedTopic]:
        conn = await self._controller()
        created = await admin_configs.create_topics(conn, new_topics, timeout_s, validate_only=validate_only)
        if not validate_only:
            for t in new_topics:
                await self._cluster.topic(t.name, timeout_s=timeout_s, allow_auto_create=False)
        return created

    async def _create_partitions(
        self, new_counts: dict[str, int], validate_only: bool, timeout_s: float
    ) -> None:
        conn = await self._controller()
        await admin_configs.create_partitions(conn, new_counts, timeout_s, validate_only=validate_only)
        for name in new_counts:
            self._cluster.invalidate(name)

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
                        *_placement(info, partition),
                    )
                    for partition, leader in enumerate(info.leaders)
                ],
            )
            for info in infos
        }
