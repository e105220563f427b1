"""Requests the configuration API tests share: DescribeConfigs, AlterConfigs, IncrementalAlterConfigs."""

from __future__ import annotations

from typing import Any

from kproto import ApiKey

from .harness import InProcessBroker

TOPIC, BROKER, BROKER_LOGGER = 2, 4, 8
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3


async def describe(
    b: InProcessBroker,
    resource_type: int,
    name: str,
    keys: list[str] | None = None,
    *,
    version: int = 4,
    synonyms: bool = True,
    documentation: bool = True,
) -> Any:
    """One resource's DescribeConfigs result."""
    body = {
        "resources": [{"resource_type": resource_type, "resource_name": name, "configuration_keys": keys}],
        "include_synonyms": synonyms,
        "include_documentation": documentation,
    }
    return (await b.request(ApiKey.DESCRIBE_CONFIGS, version, body)).results[0]


def values_of(result: Any) -> dict[str, tuple[str | None, int]]:
    """name -> (value, source) of a DescribeConfigs result."""
    return {c.name: (c.value, c.config_source) for c in result.configs}


async def alter(
    b: InProcessBroker,
    resource_type: int,
    name: str,
    configs: dict[str, str | None],
    *,
    validate_only: bool = False,
    version: int = 2,
) -> Any:
    body = {
        "resources": [
            {
                "resource_type": resource_type,
                "resource_name": name,
                "configs": [{"name": k, "value": v} for k, v in configs.items()],
            }
        ],
        "validate_only": validate_only,
    }
    return (await b.request(ApiKey.ALTER_CONFIGS, version, body)).responses[0]


async def incremental(
    b: InProcessBroker,
    resource_type: int,
    name: str,
    ops: list[tuple[str, int, str | None]],
    *,
    validate_only: bool = False,
    version: int = 1,
) -> Any:
    body = {
        "resources": [
            {
                "resource_type": resource_type,
                "resource_name": name,
                "configs": [{"name": n, "config_operation": op, "value": v} for n, op, v in ops],
            }
        ],
        "validate_only": validate_only,
    }
    return (await b.request(ApiKey.INCREMENTAL_ALTER_CONFIGS, version, body)).responses[0]
