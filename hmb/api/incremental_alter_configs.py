"""IncrementalAlterConfigs: change some settings of a topic or a broker resource.

Each listed setting gets an operation, Kafka's four:

    SET (0)       the value given
    DELETE (1)    back to the layer below (the broker's value, for a topic)
    APPEND (2)    add items to a list setting (``cleanup.policy``)
    SUBTRACT (3)  remove items from a list setting

APPEND and SUBTRACT start from the value in force (the default included:
APPEND ``compact`` to a topic on the default ``cleanup.policy`` gives
``delete,compact``).  APPEND and SUBTRACT on a setting that is not a list, an unknown operation, or
the same name twice in one resource are INVALID_REQUEST; the rest of the
rules (errors per resource type, ``validate_only``, all or nothing) are in
:mod:`hmb.api.config_changes`.  Settings not listed keep their values.
"""

from __future__ import annotations

from typing import Any

from hmb.api.config_changes import RefusedError, answer, apply, current
from hmb.api.context import Reply, RequestContext
from hmb.api.registry import handles
from hmb.properties.describe import BROKER_NAMES, TOPIC_NAMES
from kproto import ApiKey, ErrorCode

SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
TOPIC = 2


def _is_list(resource_type: int, name: str) -> bool:
    prop = (TOPIC_NAMES if resource_type == TOPIC else BROKER_NAMES).get(name)
    return prop is not None and prop.kind.name == "list"


@handles(ApiKey.INCREMENTAL_ALTER_CONFIGS, versions=(0, 1))
async def handle(ctx: RequestContext) -> Reply:
    body = ctx.request.body

    def change(resource: Any) -> None:
        names = [c.name for c in resource.configs]
        if len(names) != len(set(names)):
            raise RefusedError(ErrorCode.INVALID_REQUEST, "Error due to duplicate config keys")
        values = current(ctx.settings, resource.resource_type, resource.resource_name)

        def effective() -> dict[str, str | None]:
            """The values in force: APPEND and SUBTRACT start from them (a default included)."""
            if resource.resource_type == TOPIC:
                entries = ctx.settings.describe_topic(resource.resource_name)
            else:
                entries = ctx.settings.describe_broker(str(ctx.config.node_id))
            return {e.name: e.value for e in entries}

        for c in resource.configs:
            op = c.config_operation
            if op == SET:
                if c.value is None:
                    raise RefusedError(ErrorCode.INVALID_REQUEST, f"Null value not supported for : {c.name}")
                values[c.name] = c.value
            elif op == DELETE:
                values.pop(c.name, None)
            elif op in (APPEND, SUBTRACT):
                if not _is_list(resource.resource_type, c.name):
                    verb = "append" if op == APPEND else "subtract"
                    raise RefusedError(
                        ErrorCode.INVALID_REQUEST,
                        f"Config value {verb} is not allowed for config key: {c.name}",
                    )
                start = values[c.name] if c.name in values else effective().get(c.name) or ""
                items = [i for i in start.split(",") if i]
                given = [i.strip() for i in (c.value or "").split(",") if i.strip()]
                if op == APPEND:
                    items += [i for i in given if i not in items]
                else:
                    items = [i for i in items if i not in given]
                values[c.name] = ",".join(items)
            else:
                raise RefusedError(ErrorCode.INVALID_REQUEST, f"Unknown config operation {op} for {c.name}")
        apply(ctx.settings, resource.resource_type, resource.resource_name, values, body.validate_only)

    return answer(body.resources, change)
