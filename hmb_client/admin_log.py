"""Partitions' logs and the cluster for the admin client: ListOffsets (by time
and the special times), DeleteRecords, DescribeProducers, DescribeLogDirs,
DescribeCluster.

Rules of this module: every function runs in the admin's I/O thread; what
concerns a partition goes to its leader, a log directory question to each
broker asked, the cluster question to any broker.  A special time a broker
cannot answer (MAX_TIMESTAMP before ListOffsets v7) raises
UnsupportedVersionError naming the version it needs, instead of being
sent and misread.  Error codes raise their exception naming the partition.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from hmb_client.admin_types import (
    OFFSET_SPEC_VERSION,
    ClusterDescription,
    ListOffsetsResult,
    LogDirDescription,
    Node,
    OffsetSpec,
    ProducerState,
    ReplicaInfo,
)
from hmb_client.cluster import Cluster
from hmb_client.connection import versions_from
from hmb_client.errors import UnsupportedVersionError, error_for
from hmb_client.request_bodies import list_offsets_body
from hmb_client.structs import TopicPartition
from kproto import ApiKey


def _lowest_version(spec: int) -> int:
    """The lowest ListOffsets version that answers ``spec`` (a timestamp needs v1)."""
    if spec >= 0:
        return 1
    if spec in OffsetSpec._value2member_map_:
        return OFFSET_SPEC_VERSION[OffsetSpec(spec)]
    raise ValueError(f"{spec} is neither a timestamp (>= 0) nor one of {[s.name for s in OffsetSpec]}")


async def _by_leader(
    cluster: Cluster, partitions: Iterable[TopicPartition], timeout_s: float
) -> dict[int, list[TopicPartition]]:
    out: dict[int, list[TopicPartition]] = {}
    for tp in partitions:
        leader = await cluster.leader(tp.topic, tp.partition, timeout_s=timeout_s)
        out.setdefault(leader, []).append(tp)
    return out


async def list_offsets(
    cluster: Cluster, specs: Mapping[TopicPartition, int], timeout_s: float, isolation_level: int = 0
) -> dict[TopicPartition, ListOffsetsResult]:
    """The offset per partition at a time in ms or an :class:`OffsetSpec`, from its leader."""
    out: dict[TopicPartition, ListOffsetsResult] = {}
    for leader, tps in (await _by_leader(cluster, specs, timeout_s)).items():
        conn = await cluster.connection(leader)
        needed = max(_lowest_version(specs[tp]) for tp in tps)
        try:
            version = conn.pick(ApiKey.LIST_OFFSETS, versions_from(needed, ApiKey.LIST_OFFSETS))
        except UnsupportedVersionError:
            special = {
                OffsetSpec(specs[tp]).name
                for tp in tps
                if specs[tp] < 0 and _lowest_version(specs[tp]) == needed
            }
            what = " and ".join(sorted(special)) or "a timestamp"
            served = conn.versions.get(ApiKey.LIST_OFFSETS)
            raise UnsupportedVersionError(
                f"{what} needs ListOffsets v{needed}; {conn.host}:{conn.port} serves "
                + (f"versions {served[0]}-{served[1]}" if served else "no ListOffsets")
            ) from None
        body = list_offsets_body(
            {tp: specs[tp] for tp in tps}, isolation_level, timeout_ms=int(timeout_s * 1000)
        )
        response = await conn.request(ApiKey.LIST_OFFSETS, version, body)
        for t in response.topics:
            for p in t.partitions:
                tp = TopicPartition(t.name, p.partition_index)
                if p.error_code:
                    raise error_for(p.error_code)(f"listing the offsets of {tp.topic}-{tp.partition}")
                if version == 0:
                    found = list(p.old_style_offsets)
                    out[tp] = ListOffsetsResult(found[0] if found else -1, -1)
                else:
                    out[tp] = ListOffsetsResult(p.offset, p.timestamp, p.leader_epoch if version >= 4 else -1)
    return dict(sorted(out.items()))


async def delete_records(
    cluster: Cluster, offsets: Mapping[TopicPartition, int], timeout_s: float
) -> dict[TopicPartition, int]:
    """DeleteRecords: each partition's log now starts at ``offsets[tp]`` (-1: its high watermark).

    Returns each partition's new low watermark (log start offset).
    """
    out: dict[TopicPartition, int] = {}
    for leader, tps in (await _by_leader(cluster, offsets, timeout_s)).items():
        conn = await cluster.connection(leader)
        by_topic: dict[str, list[TopicPartition]] = {}
        for tp in tps:
            by_topic.setdefault(tp.topic, []).append(tp)
        response = await conn.request(
            ApiKey.DELETE_RECORDS,
            conn.pick(ApiKey.DELETE_RECORDS),
            {
                "topics": [
                    {
                        "name": t,
                        "partitions": [{"partition_index": tp.partition, "offset": offsets[tp]} for tp in ps],
                    }
                    for t, ps in by_topic.items()
                ],
                "timeout_ms": int(timeout_s * 1000),
            },
            timeout_s=timeout_s + conn.request_timeout_s,
        )
        for t in response.topics:
            for p in t.partitions:
                if p.error_code:
                    raise error_for(p.error_code)(
                        f"deleting records of {t.name}-{p.partition_index} before offset "
                        f"{offsets[TopicPartition(t.name, p.partition_index)]}"
                    )
                out[TopicPartition(t.name, p.partition_index)] = p.low_watermark
    return dict(sorted(out.items()))


async def describe_producers(
    cluster: Cluster, partitions: Iterable[TopicPartition], timeout_s: float
) -> dict[TopicPartition, list[ProducerState]]:
    """The producers with state on each partition (idempotent or transactional), from its leader."""
    out: dict[TopicPartition, list[ProducerState]] = {}
    for leader, tps in (await _by_leader(cluster, partitions, timeout_s)).items():
        conn = await cluster.connection(leader)
        by_topic: dict[str, list[int]] = {}
        for tp in tps:
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        response = await conn.request(
            ApiKey.DESCRIBE_PRODUCERS,
            conn.pick(ApiKey.DESCRIBE_PRODUCERS),
            {"topics": [{"name": t, "partition_indexes": ps} for t, ps in by_topic.items()]},
        )
        for t in response.topics:
            for p in t.partitions:
                if p.error_code:
                    detail = p.error_message or ""
                    raise error_for(p.error_code)(
                        f"describing the producers of {t.name}-{p.partition_index} {detail}".rstrip()
                    )
                out[TopicPartition(t.name, p.partition_index)] = [
                    ProducerState(
                        s.producer_id,
                        s.producer_epoch,
                        s.last_sequence,
                        s.last_timestamp,
                        s.coordinator_epoch,
                        s.current_txn_start_offset,
                    )
                    for s in p.active_producers
                ]
    return dict(sorted(out.items()))


async def describe_log_dirs(
    cluster: Cluster, timeout_s: float, broker_ids: Iterable[int] | None = None
) -> dict[int, list[LogDirDescription]]:
    """Each broker's log directories with the size of every partition replica in them."""
    if broker_ids is None:
        await cluster.refresh(None, deadline_s=timeout_s, allow_auto_create=False)
        broker_ids = sorted(cluster.nodes)
    out: dict[int, list[LogDirDescription]] = {}
    for node in broker_ids:
        conn = await cluster.connection(node)
        version = conn.pick(ApiKey.DESCRIBE_LOG_DIRS)
        body = await conn.request(ApiKey.DESCRIBE_LOG_DIRS, version, {"topics": None})
        if version >= 3 and body.error_code:
            raise error_for(body.error_code)(f"describing the log directories of broker {node}")
        out[node] = [
            LogDirDescription(
                path=d.log_dir,
                error_code=d.error_code,
                partitions={
                    TopicPartition(t.name, p.partition_index): ReplicaInfo(
                        p.partition_size, p.offset_lag, bool(p.is_future_key)
                    )
                    for t in d.topics
                    for p in t.partitions
                },
                total_bytes=d.total_bytes if version >= 4 else -1,
                usable_bytes=d.usable_bytes if version >= 4 else -1,
            )
            for d in body.results
        ]
    return out


async def describe_cluster(cluster: Cluster, timeout_s: float) -> ClusterDescription:
    """DescribeCluster: the cluster id, the controller and the brokers."""
    conn = await cluster.any_connection(timeout_s)
    body = await conn.request(
        ApiKey.DESCRIBE_CLUSTER,
        conn.pick(ApiKey.DESCRIBE_CLUSTER),
        {"include_cluster_authorized_operations": False, "endpoint_type": 1, "include_fenced_brokers": False},
    )
    if body.error_code:
        raise error_for(body.error_code)(f"describing the cluster {body.error_message or ''}".rstrip())
    brokers = tuple(sorted(Node(b.broker_id, b.host, b.port, b.rack) for b in body.brokers))
    return ClusterDescription(body.cluster_id, body.controller_id, brokers)
