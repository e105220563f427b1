"""A whole response that answers a request with one error code, for fault injection.

Rules:

* The reply has the shape a client expects from a real refusal: APIs that
  answer per topic and partition echo the request's topics and partitions,
  each with the error code (and the top-level error code, where there is
  one, stays 0); every other API gets the error in its top-level
  ``error_code``.
* Every field the shape does not set gets a neutral value from the
  response grammar of the request's version: -1 for offsets, epochs, ids
  and times, 0 for other numbers, empty arrays, empty or null strings.
* The log is never touched: a refused Produce appends nothing, as a broker
  that is not the leader appends nothing.
* A topic is named as the request names it: by name, or by its 16-byte id
  in the versions that use ids (Produce v13, Fetch v13+, OffsetCommit v10), and echoed
  the same way; resolving an id to a name is the caller's business.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from kproto import ApiKey, Request
from kproto.primitives import BooleanType
from kproto.registry import RESPONSES, response_message
from kproto.schema import AUTO, Array, Bytes, Field, Records, String


class _Echo(NamedTuple):
    """Where the topics and partitions are in a request, and where they go in its response."""

    req_topics: str
    req_name: str
    req_partitions: str | None  # None: topic-level only; a name of an int array or of structs
    req_index: str | None  # None: the partitions are a plain int array
    resp_topics: str
    resp_name: str
    resp_partitions: str | None
    resp_index: str | None


ECHOES: dict[int, _Echo] = {
    ApiKey.PRODUCE: _Echo("topic_data", "name", "partition_data", "index", "responses", "name", "partition_responses", "index"),  # noqa: E501
    ApiKey.FETCH: _Echo("topics", "topic", "partitions", "partition", "responses", "topic", "partitions", "partition_index"),  # noqa: E501
    ApiKey.LIST_OFFSETS: _Echo("topics", "name", "partitions", "partition_index", "topics", "name", "partitions", "partition_index"),  # noqa: E501
    ApiKey.OFFSET_COMMIT: _Echo("topics", "name", "partitions", "partition_index", "topics", "name", "partitions", "partition_index"),  # noqa: E501
    ApiKey.OFFSET_FETCH: _Echo("topics", "name", "partition_indexes", None, "topics", "name", "partitions", "partition_index"),  # noqa: E501
    ApiKey.METADATA: _Echo("topics", "name", None, None, "topics", "name", None, None),
    ApiKey.CREATE_TOPICS: _Echo("topics", "name", None, None, "topics", "name", None, None),
}  # fmt: skip

_MINUS_ONE_HINTS = ("offset", "epoch", "timestamp", "_id", "leader", "_ms")


def _topic_key(topic: Any, name_field: str) -> str | bytes:
    """A request's topic: its name, or its id where the version names topics by id."""
    name = getattr(topic, name_field, None)
    topic_id = getattr(topic, "topic_id", None)
    if not name and topic_id:  # no name (None, or "" from Produce's fast decoder): named by id
        return bytes(topic_id)
    return "" if name is None else str(name)


def topic_partitions(request: Request) -> list[tuple[str | bytes, int | None]]:
    """The (topic, partition) pairs a request names (a topic by name, or by id where the
    version uses ids); partition None for topic-level APIs."""
    echo = ECHOES.get(request.api_key)
    body = request.body
    if request.api_key == ApiKey.DELETE_TOPICS:
        return [(name, None) for name in body.topic_names or ()]
    if echo is None:
        return []
    out: list[tuple[str | bytes, int | None]] = []
    for topic in getattr(body, echo.req_topics, None) or ():
        name = _topic_key(topic, echo.req_name)
        if echo.req_partitions is None:
            out.append((name, None))
            continue
        for part in getattr(topic, echo.req_partitions) or ():
            out.append((name, part if echo.req_index is None else getattr(part, echo.req_index)))
    return out


def can_refuse(api_key: int) -> bool:
    """Whether an error reply can be made for ``api_key`` (every key with an error code can)."""
    if api_key in ECHOES or api_key == ApiKey.DELETE_TOPICS:
        return True
    msg = RESPONSES.get(api_key)
    return msg is not None and any(f.name == "error_code" for f in msg.fields)


def error_reply(request: Request, error: int) -> dict[str, Any]:
    """The body of ``request``'s response refusing it with ``error``."""
    fields = response_message(request.api_key, request.version).fields
    echo = ECHOES.get(request.api_key)
    if request.api_key == ApiKey.DELETE_TOPICS:
        skeleton: dict[str, Any] = {
            "responses": [{"name": n, "error_code": error} for n, _ in topic_partitions(request)]
        }
    elif echo is None:
        skeleton = {"error_code": error}
    else:
        by_topic: dict[str | bytes, list[int | None]] = {}
        for name, part in topic_partitions(request):
            by_topic.setdefault(name, []).append(part)
        topics = []
        for name, parts in by_topic.items():
            field = "topic_id" if isinstance(name, bytes) else echo.resp_name
            entry: dict[str, Any] = {field: name, "error_code": error}
            if echo.resp_partitions is not None:
                entry[echo.resp_partitions] = [{echo.resp_index: p, "error_code": error} for p in parts]
            topics.append(entry)
        skeleton = {echo.resp_topics: topics, "error_code": 0}
    return _fill(fields, skeleton, request.version)


def _fill(fields: Sequence[Field], values: dict[str, Any], version: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in fields:
        if not f.present_in(version) or f.tag is not None:
            continue
        if f.name in values:
            value = values[f.name]
            if isinstance(f.type, Array) and isinstance(f.type.of, (list, tuple)):
                value = [_fill(f.type.of, item, version) for item in value]
            out[f.name] = value
        else:
            out[f.name] = _blank(f, version)
    return out


def _blank(f: Field, version: int) -> Any:
    declared = None if f.default is AUTO else f.default  # AUTO: the spec gives no default
    if isinstance(f.type, Array):
        return []
    if f.type is String:
        return None if f.nullable_in(version) else ""
    if f.type is Bytes or f.type is Records:
        return None if f.nullable_in(version) else b""
    if isinstance(f.type, BooleanType):
        return False if declared is None else declared
    if declared is not None:
        return declared
    if f.name != "throttle_time_ms" and any(h in f.name for h in _MINUS_ONE_HINTS):
        return -1
    return 0
