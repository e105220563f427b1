"""Consumer groups for the admin client: list, describe, their committed
offsets (read, alter, delete) and deleting whole groups.

Rules of this module: every function runs in the admin's I/O thread.
ListGroups goes to every broker (each lists the groups it coordinates);
everything about one group goes to its coordinator (FindCoordinator).  A
group that speaks the consumer protocol has its members' subscriptions and
assignments decoded (:mod:`hmb_client.assignors`); any other protocol's
bytes are left alone.  ListGroups before v4 reports no state: the states
are then asked with DescribeGroups, so a listing always has them.  Error
codes raise their exception naming the group (and partition), after the
whole answer has been read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from hmb_client.admin_types import GroupDescription, GroupListing, MemberDescription
from hmb_client.assignors import PROTOCOL_TYPE, ConsumerProtocolError, decode_assignment, decode_subscription
from hmb_client.cluster import Cluster
from hmb_client.connection import BrokerConnection
from hmb_client.errors import KafkaError, error_for
from hmb_client.request_bodies import (
    offset_commit_body,
    offset_fetch_answer,
    offset_fetch_body,
    offsets_version,
)
from hmb_client.structs import OffsetAndMetadata, TopicPartition
from kproto import ApiKey, ErrorCode


def _node_of(cluster: Cluster, conn: BrokerConnection) -> int:
    return next((n for n, addr in cluster.nodes.items() if addr == (conn.host, conn.port)), -1)


async def list_groups(
    cluster: Cluster, timeout_s: float, states: Iterable[str] | None = None
) -> list[GroupListing]:
    """Every group of every broker, optionally only those in ``states`` (any case)."""
    wanted = None if states is None else {s.lower() for s in states}
    await cluster.refresh(None, deadline_s=timeout_s, allow_auto_create=False)
    out: list[GroupListing] = []
    for node in sorted(cluster.nodes):
        conn = await cluster.connection(node)
        version = conn.pick(ApiKey.LIST_GROUPS)
        body = await conn.request(
            ApiKey.LIST_GROUPS, version, {"states_filter": sorted(wanted or ()), "types_filter": []}
        )
        if body.error_code:
            raise error_for(body.error_code)(f"listing the groups of broker {node}")
        listed = [
            GroupListing(g.group_id, g.protocol_type, g.group_state if version >= 4 else "")
            for g in body.groups
        ]
        if version < 4 and listed:
            described = await _describe_on(conn, node, [g.group_id for g in listed])
            listed = [g._replace(state=described[g.group_id].state) for g in listed]
        out.extend(g for g in listed if wanted is None or g.state.lower() in wanted)
    return sorted(out)


async def describe_groups(cluster: Cluster, group_ids: Iterable[str]) -> dict[str, GroupDescription]:
    """Members, assignments and state of each group, from its coordinator."""
    by_node: dict[int, tuple[BrokerConnection, list[str]]] = {}
    for group in group_ids:
        conn = await cluster.coordinator(group)
        by_node.setdefault(_node_of(cluster, conn), (conn, []))[1].append(group)
    out: dict[str, GroupDescription] = {}
    for node, (conn, groups) in by_node.items():
        out.update(await _describe_on(conn, node, groups))
    return out


async def _describe_on(conn: BrokerConnection, node: int, groups: list[str]) -> dict[str, GroupDescription]:
    version = conn.pick(ApiKey.DESCRIBE_GROUPS)
    body = await conn.request(
        ApiKey.DESCRIBE_GROUPS, version, {"groups": groups, "include_authorized_operations": False}
    )
    out = {}
    for g in body.groups:
        if g.error_code == ErrorCode.GROUP_ID_NOT_FOUND:  # v6+ (KIP-1043); "Dead" before
            out[g.group_id] = GroupDescription(g.group_id, "Dead", "", "", (), node)
            continue
        if g.error_code:
            detail = getattr(g, "error_message", None) or ""
            raise error_for(g.error_code)(f"describing group {g.group_id!r} {detail}".rstrip())
        members = tuple(_member(m, g.protocol_type) for m in g.members)
        out[g.group_id] = GroupDescription(
            g.group_id, g.group_state, g.protocol_type, g.protocol_data, members, node
        )
    return out


def _member(m: Any, protocol_type: str) -> MemberDescription:
    assignment: tuple[TopicPartition, ...] = ()
    topics: tuple[str, ...] = ()
    if protocol_type == PROTOCOL_TYPE:
        try:
            assignment = tuple(sorted(decode_assignment(bytes(m.member_assignment)).partitions))
            if m.member_metadata:
                topics = tuple(sorted(decode_subscription(bytes(m.member_metadata)).topics))
        except ConsumerProtocolError:
            pass  # a client that says "consumer" but sends something else: shown without them
    instance = getattr(m, "group_instance_id", None)
    return MemberDescription(m.member_id, instance, m.client_id, m.client_host, assignment, topics)


async def group_offsets(
    cluster: Cluster, group_id: str, timeout_s: float, partitions: Iterable[TopicPartition] | None = None
) -> dict[TopicPartition, OffsetAndMetadata]:
    """The committed offsets of ``group_id`` (all of them, or of ``partitions``)."""
    conn = await cluster.coordinator(group_id)
    version = offsets_version(conn.pick(ApiKey.OFFSET_FETCH), None, ())  # by name: v9 at most
    if partitions is not None:
        body = offset_fetch_body(group_id, partitions, version)
    elif version >= 2:
        body = offset_fetch_body(group_id, None, version)  # null: every partition with an offset
    else:  # v1 cannot ask for "all": every partition the cluster has
        await cluster.refresh(None, deadline_s=timeout_s, allow_auto_create=False)
        every = [TopicPartition(t.name, p) for t in cluster.topics.values() for p in range(t.partitions)]
        body = offset_fetch_body(group_id, every, version)
    response = await conn.request(ApiKey.OFFSET_FETCH, version, body)
    error, topics = offset_fetch_answer(response, version)
    if error:
        raise error_for(error)(f"fetching the offsets of group {group_id!r}")
    out = {}
    for t in topics:
        for p in t.partitions:
            if p.error_code:
                raise error_for(p.error_code)(
                    f"fetching the offset of group {group_id!r} on {t.name}-{p.partition_index}"
                )
            if p.committed_offset >= 0:
                out[TopicPartition(t.name, p.partition_index)] = OffsetAndMetadata(
                    p.committed_offset, p.metadata or ""
                )
    return dict(sorted(out.items()))


async def alter_group_offsets(
    cluster: Cluster, group_id: str, offsets: Mapping[TopicPartition, OffsetAndMetadata]
) -> None:
    """Commit ``offsets`` for ``group_id`` as a non-member (the group must have no active members)."""
    conn = await cluster.coordinator(group_id)
    version = offsets_version(conn.pick(ApiKey.OFFSET_COMMIT), None, ())  # by name: v9 at most
    response = await conn.request(ApiKey.OFFSET_COMMIT, version, offset_commit_body(group_id, offsets))
    for t in response.topics:
        for p in t.partitions:
            if p.error_code:
                raise error_for(p.error_code)(
                    f"committing the offset of group {group_id!r} on {t.name}-{p.partition_index}"
                )


async def delete_groups(cluster: Cluster, group_ids: Iterable[str]) -> None:
    """DeleteGroups at each group's coordinator; raises the first failure after all were tried."""
    by_node: dict[int, tuple[BrokerConnection, list[str]]] = {}
    for group in group_ids:
        conn = await cluster.coordinator(group)
        by_node.setdefault(_node_of(cluster, conn), (conn, []))[1].append(group)
    errors: list[KafkaError] = []
    for conn, groups in by_node.values():
        body = await conn.request(
            ApiKey.DELETE_GROUPS, conn.pick(ApiKey.DELETE_GROUPS), {"groups_names": groups}
        )
        errors.extend(
            error_for(r.error_code)(f"deleting group {r.group_id!r}") for r in body.results if r.error_code
        )
    if errors:
        raise errors[0]


async def delete_group_offsets(cluster: Cluster, group_id: str, partitions: Iterable[TopicPartition]) -> None:
    """OffsetDelete: forget ``group_id``'s committed offsets of ``partitions``."""
    conn = await cluster.coordinator(group_id)
    by_topic: dict[str, list[int]] = {}
    for tp in partitions:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    body = await conn.request(
        ApiKey.OFFSET_DELETE,
        conn.pick(ApiKey.OFFSET_DELETE),
        {
            "group_id": group_id,
            "topics": [
                {"name": t, "partitions": [{"partition_index": p} for p in ps]} for t, ps in by_topic.items()
            ],
        },
    )
    if body.error_code:
        raise error_for(body.error_code)(f"deleting the offsets of group {group_id!r}")
    for t in body.topics:
        for p in t.partitions:
            if p.error_code:
                raise error_for(p.error_code)(
                    f"deleting the offset of group {group_id!r} on {t.name}-{p.partition_index}"
                )
