"""AlterConfigs: replace a topic's or a broker resource's settings, all of them at once.

Unlike IncrementalAlterConfigs, the settings given are the resource's whole
new set: a setting not listed goes back to the layer below (the broker's
value for a topic, the static value for a broker).  A null value is
INVALID_REQUEST, as Kafka.  The rules shared with the incremental API are in
:mod:`hmb.api.config_changes`.
"""

from __future__ import annotations

from typing import Any

from hmb.api.config_changes import RefusedError, answer, apply
from hmb.api.context import Reply, RequestContext
from hmb.api.registry import handles
from kproto import ApiKey, ErrorCode


@handles(ApiKey.ALTER_CONFIGS, versions=(0, 2))
async def handle(ctx: RequestContext) -> Reply:
    body = ctx.request.body

    def change(resource: Any) -> None:
        values: dict[str, str] = {}
        for c in resource.configs:
            if c.value is None:
                raise RefusedError(ErrorCode.INVALID_REQUEST, f"Null value not supported for : {c.name}")
            values[c.name] = c.value
        apply(ctx.settings, resource.resource_type, resource.resource_name, values, body.validate_only)

    return answer(body.resources, change)
