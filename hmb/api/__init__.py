"""The API layer: one module per API key, each declaring its version range.

``HANDLERS`` maps api key -> :class:`Handler`.  The same table answers
ApiVersions, so what is advertised is exactly what is served.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from types import ModuleType

from hmb.api import (
    api_versions,
    create_topics,
    delete_topics,
    describe_groups,
    fetch,
    find_coordinator,
    heartbeat,
    init_producer_id,
    join_group,
    leave_group,
    list_groups,
    list_offsets,
    metadata,
    offset_commit,
    offset_fetch,
    produce,
    sync_group,
)
from hmb.api.context import Reply, RequestContext


@dataclass(frozen=True)
class Handler:
    api_key: int
    min_version: int
    max_version: int
    handle: Callable[[RequestContext], Awaitable[Reply]]

    def supports(self, version: int) -> bool:
        return self.min_version <= version <= self.max_version


def _handler(module: ModuleType) -> Handler:
    low, high = module.VERSIONS
    return Handler(int(module.API_KEY), low, high, module.handle)


_MODULES: tuple[ModuleType, ...] = (
    produce,
    fetch,
    list_offsets,
    metadata,
    offset_commit,
    offset_fetch,
    find_coordinator,
    init_producer_id,
    create_topics,
    delete_topics,
    join_group,
    sync_group,
    heartbeat,
    leave_group,
    describe_groups,
    list_groups,
    api_versions,
)

HANDLERS: dict[int, Handler] = {h.api_key: h for h in map(_handler, _MODULES)}
