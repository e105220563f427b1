"""DescribeConfigs: every setting of a topic or a broker, with its value, source and synonyms.

What a resource answers (:mod:`hmb.settings`, from the one settings table):

* a topic (resource type 2): every topic-level setting, its value in the
  entry's own unit and where it comes from (a topic override, a dynamic or
  static broker value, the default); UNKNOWN_TOPIC_OR_PARTITION for a topic
  that does not exist;
* a broker (4) named by this broker's id: every broker setting, read-only
  unless it can change at run time; named ``""``: the cluster-wide dynamic
  defaults only; another broker's id: INVALID_REQUEST with Kafka's message;
* any other type (broker loggers, groups, client metrics): INVALID_REQUEST.

``configuration_keys`` narrows the answer to those names (null: all);
``include_synonyms`` (v1+) adds the layers behind each value;
``include_documentation`` (v3+) the help text.  v1+ report the source,
v3+ the config type.  Nothing is sensitive yet, so no value is withheld.
"""

from __future__ import annotations

from typing import Any

from hmb.api.context import Reply, RequestContext
from hmb.api.registry import handles
from hmb.properties.describe import Entry
from hmb.settings import UnknownResourceError
from kproto import ApiKey, ErrorCode

TOPIC, BROKER = 2, 4


def _config(e: Entry, version: int, synonyms: bool, documentation: bool) -> dict[str, Any]:
    return {
        "name": e.name,
        "value": None if e.sensitive else e.value,
        "read_only": e.read_only,
        "config_source": int(e.source),
        "is_default": e.source == 5,
        "is_sensitive": e.sensitive,
        "synonyms": [
            {"name": n, "value": None if e.sensitive else v, "source": int(s)} for n, v, s in e.synonyms
        ]
        if synonyms and version >= 1
        else [],
        "config_type": int(e.config_type),
        "documentation": e.documentation if documentation else None,
    }


@handles(ApiKey.DESCRIBE_CONFIGS, versions=(1, 4))
async def handle(ctx: RequestContext) -> Reply:
    body = ctx.request.body
    version = ctx.request.version
    synonyms = bool(body.get("include_synonyms", False))
    documentation = bool(body.get("include_documentation", False))
    results = []
    for resource in body.resources:
        result: dict[str, Any] = {
            "error_code": ErrorCode.NONE,
            "error_message": None,
            "resource_type": resource.resource_type,
            "resource_name": resource.resource_name,
            "configs": [],
        }
        try:
            if resource.resource_type == TOPIC:
                entries = ctx.settings.describe_topic(resource.resource_name)
            elif resource.resource_type == BROKER:
                entries = ctx.settings.describe_broker(resource.resource_name)
            else:
                raise ValueError(f"resource type {resource.resource_type} is not supported")
        except UnknownResourceError as exc:
            code = (
                ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                if resource.resource_type == TOPIC
                else ErrorCode.INVALID_REQUEST
            )
            result.update(error_code=code, error_message=str(exc))
        except ValueError as exc:
            result.update(error_code=ErrorCode.INVALID_REQUEST, error_message=str(exc))
        else:
            keys = resource.configuration_keys
            wanted = None if keys is None else set(keys)
            result["configs"] = [
                _config(e, version, synonyms, documentation)
                for e in entries
                if wanted is None or e.name in wanted
            ]
        results.append(result)
    return {"throttle_time_ms": 0, "results": results}
