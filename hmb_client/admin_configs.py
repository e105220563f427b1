"""Configs and topic shape for the admin client: DescribeConfigs, AlterConfigs,
IncrementalAlterConfigs, CreateTopics with configs, CreatePartitions.

Rules of this module: every function runs in the admin's I/O thread and
takes the :class:`~hmb_client.cluster.Cluster`; a broker resource with an
id goes to that broker (its configs live there), everything else to any
broker (topics and the cluster-wide default are answered by every one).  An
error code in an answer raises that code's exception naming the resource,
with the broker's own error message when it sent one, after the whole
answer has been read: a request either succeeds for every resource or the
caller learns which one failed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from hmb_client.admin_types import (
    AlterConfigOp,
    ConfigEntry,
    ConfigResource,
    ConfigResourceType,
    ConfigSource,
    ConfigSynonym,
    CreatedTopic,
    NewTopic,
)
from hmb_client.cluster import Cluster
from hmb_client.connection import BrokerConnection
from hmb_client.errors import UnsupportedVersionError, error_for
from kproto import ApiKey


def describe(resource: ConfigResource) -> str:
    """``topic 'orders'``, ``broker 1``, ``the cluster-wide broker default``: for messages."""
    if resource.restype == ConfigResourceType.BROKER:
        return f"broker {resource.name}" if resource.name else "the cluster-wide broker default"
    return f"{ConfigResourceType(resource.restype).name.lower()} {resource.name!r}"


async def _connection_for(cluster: Cluster, resource: ConfigResource, timeout_s: float) -> BrokerConnection:
    if resource.restype in (ConfigResourceType.BROKER, ConfigResourceType.BROKER_LOGGER) and resource.name:
        return await cluster.connection(int(resource.name))
    return await cluster.any_connection(timeout_s)


def _by_connection(resources: Iterable[ConfigResource]) -> dict[int | None, list[ConfigResource]]:
    """Resources grouped by where they go: a broker id, or None for any broker."""
    out: dict[int | None, list[ConfigResource]] = {}
    for r in resources:
        per_broker = r.restype in (ConfigResourceType.BROKER, ConfigResourceType.BROKER_LOGGER)
        out.setdefault(int(r.name) if per_broker and r.name else None, []).append(r)
    return out


def _raise_for(results: Iterable[Any], what: str) -> None:
    for r in results:
        if r.error_code:
            resource = ConfigResource(ConfigResourceType(r.resource_type), r.resource_name)
            detail = getattr(r, "error_message", None) or ""
            raise error_for(r.error_code)(f"{what} {describe(resource)}: {detail}".rstrip(": "))


async def describe_configs(
    cluster: Cluster,
    resources: Iterable[ConfigResource],
    timeout_s: float,
    *,
    include_synonyms: bool = True,
    include_documentation: bool = False,
    names: Iterable[str] | None = None,
) -> dict[ConfigResource, dict[str, ConfigEntry]]:
    """Every setting (or only ``names``) of each resource, by resource and name."""
    wanted = None if names is None else list(names)
    out: dict[ConfigResource, dict[str, ConfigEntry]] = {}
    for group in _by_connection(resources).values():
        conn = await _connection_for(cluster, group[0], timeout_s)
        version = conn.pick(ApiKey.DESCRIBE_CONFIGS)
        body = await conn.request(
            ApiKey.DESCRIBE_CONFIGS,
            version,
            {
                "resources": [
                    {"resource_type": int(r.restype), "resource_name": r.name, "configuration_keys": wanted}
                    for r in group
                ],
                "include_synonyms": include_synonyms,
                "include_documentation": include_documentation,
            },
        )
        _raise_for(body.results, "describing the configs of")
        for result in body.results:
            resource = ConfigResource(ConfigResourceType(result.resource_type), result.resource_name)
            out[resource] = {c.name: _entry(c, version) for c in result.configs}
    return out


def _entry(c: Any, version: int) -> ConfigEntry:
    return ConfigEntry(
        name=c.name,
        value=c.value,
        source=ConfigSource.of(c.config_source),
        read_only=bool(c.read_only),
        sensitive=bool(c.is_sensitive),
        synonyms=tuple(ConfigSynonym(s.name, s.value, ConfigSource.of(s.source)) for s in c.synonyms),
        config_type=c.config_type if version >= 3 else 0,
        documentation=c.documentation if version >= 3 else None,
    )


async def alter_configs(
    cluster: Cluster,
    configs: Mapping[ConfigResource, Mapping[str, str | None]],
    timeout_s: float,
    *,
    validate_only: bool = False,
) -> None:
    """AlterConfigs: each resource's dynamic settings become exactly ``configs[resource]``
    (Kafka's legacy call: a setting left out goes back to its default)."""
    for group in _by_connection(configs).values():
        conn = await _connection_for(cluster, group[0], timeout_s)
        body = await conn.request(
            ApiKey.ALTER_CONFIGS,
            conn.pick(ApiKey.ALTER_CONFIGS),
            {
                "resources": [
                    {
                        "resource_type": int(r.restype),
                        "resource_name": r.name,
                        "configs": [{"name": k, "value": v} for k, v in configs[r].items()],
                    }
                    for r in group
                ],
                "validate_only": validate_only,
            },
        )
        _raise_for(body.responses, "altering the configs of")


async def incremental_alter_configs(
    cluster: Cluster,
    changes: Mapping[ConfigResource, Iterable[AlterConfigOp]],
    timeout_s: float,
    *,
    validate_only: bool = False,
) -> None:
    """IncrementalAlterConfigs: only the named settings change (set, delete, append, subtract)."""
    for group in _by_connection(changes).values():
        conn = await _connection_for(cluster, group[0], timeout_s)
        body = await conn.request(
            ApiKey.INCREMENTAL_ALTER_CONFIGS,
            conn.pick(ApiKey.INCREMENTAL_ALTER_CONFIGS),
            {
                "resources": [
                    {
                        "resource_type": int(r.restype),
                        "resource_name": r.name,
                        "configs": [
                            {"name": op.name, "config_operation": int(op.op), "value": op.value}
                            for op in changes[r]
                        ],
                    }
                    for r in group
                ],
                "validate_only": validate_only,
            },
        )
        _raise_for(body.responses, "altering the configs of")


async def create_topics(
    conn: BrokerConnection, topics: Iterable[NewTopic], timeout_s: float, *, validate_only: bool = False
) -> dict[str, CreatedTopic]:
    """CreateTopics sent to ``conn`` (the controller); from v5 the answer carries the configs."""
    version = conn.pick(ApiKey.CREATE_TOPICS)
    if validate_only and version < 1:
        raise UnsupportedVersionError(
            f"{conn.host}:{conn.port} serves CreateTopics v0 only, which cannot validate without creating"
        )
    wanted = list(topics)
    body = await conn.request(
        ApiKey.CREATE_TOPICS,
        version,
        {
            "topics": [
                {
                    "name": t.name,
                    "num_partitions": t.num_partitions,
                    "replication_factor": t.replication_factor
                    if version >= 4
                    else max(1, t.replication_factor),
                    "assignments": [],
                    "configs": [{"name": k, "value": v} for k, v in t.configs.items()],
                }
                for t in wanted
            ],
            "timeout_ms": int(timeout_s * 1000),
            "validate_only": validate_only,
        },
        timeout_s=timeout_s + conn.request_timeout_s,
    )
    out = {}
    for t in body.topics:
        if t.error_code:
            detail = getattr(t, "error_message", None) or ""
            raise error_for(t.error_code)(f"creating topic {t.name!r}: {detail}".rstrip(": "))
        if version >= 5:
            configs = {c.name: c.value for c in (t.configs or ())}
            out[t.name] = CreatedTopic(t.name, t.num_partitions, t.replication_factor, configs)
        else:
            out[t.name] = CreatedTopic(t.name, -1, -1, {})
    return out


async def create_partitions(
    conn: BrokerConnection, counts: Mapping[str, int], timeout_s: float, *, validate_only: bool = False
) -> None:
    """CreatePartitions sent to ``conn`` (the controller): each topic grows to ``counts[topic]``."""
    body = await conn.request(
        ApiKey.CREATE_PARTITIONS,
        conn.pick(ApiKey.CREATE_PARTITIONS),
        {
            "topics": [{"name": name, "count": n, "assignments": None} for name, n in counts.items()],
            "timeout_ms": int(timeout_s * 1000),
            "validate_only": validate_only,
        },
        timeout_s=timeout_s + conn.request_timeout_s,
    )
    for r in body.results:
        if r.error_code:
            detail = getattr(r, "error_message", None) or ""
            raise error_for(r.error_code)(f"adding partitions to topic {r.name!r}: {detail}".rstrip(": "))
