"""What AlterConfigs and IncrementalAlterConfigs share: resources, errors, the answer.

Rules (Kafka's):

* a topic resource takes topic-level names; an unknown name or a bad value is
  INVALID_CONFIG, an unknown topic UNKNOWN_TOPIC_OR_PARTITION;
* a broker resource (this broker's id, or ``""`` for every broker) takes the
  settings that can change at run time; anything else, or a bad value, is
  INVALID_REQUEST with Kafka's message ("Cannot update these configs
  dynamically: Set(...)"), and so is another broker's id;
* other resource types are INVALID_REQUEST;
* each resource succeeds or fails whole; ``validate_only`` checks and changes
  nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from hmb.config import ConfigError
from hmb.settings import Settings, UnknownResourceError
from kproto import ErrorCode

TOPIC, BROKER = 2, 4


class RefusedError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def current(settings: Settings, resource_type: int, name: str) -> dict[str, str]:
    """The resource's stored settings (what an incremental change starts from)."""
    try:
        if resource_type == TOPIC:
            return settings.topic_overrides(name)
        if resource_type == BROKER:
            return settings.broker_values(name)
    except UnknownResourceError as exc:
        code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION if resource_type == TOPIC else ErrorCode.INVALID_REQUEST
        raise RefusedError(code, str(exc)) from None
    raise RefusedError(ErrorCode.INVALID_REQUEST, f"resource type {resource_type} is not supported")


def apply(
    settings: Settings, resource_type: int, name: str, values: Mapping[str, str], validate_only: bool
) -> None:
    """Replace the resource's settings with ``values``, or :class:`RefusedError`."""
    try:
        if resource_type == TOPIC:
            settings.set_topic(name, values, validate_only=validate_only)
        elif resource_type == BROKER:
            settings.set_broker(name, values, validate_only=validate_only)
        else:
            raise RefusedError(ErrorCode.INVALID_REQUEST, f"resource type {resource_type} is not supported")
    except UnknownResourceError as exc:
        code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION if resource_type == TOPIC else ErrorCode.INVALID_REQUEST
        raise RefusedError(code, str(exc)) from None
    except ConfigError as exc:
        code = ErrorCode.INVALID_CONFIG if resource_type == TOPIC else ErrorCode.INVALID_REQUEST
        raise RefusedError(code, str(exc)) from None


def answer(resources: Any, change: Callable[[Any], None]) -> dict[str, Any]:
    """Run ``change`` per resource and build the response, one entry per resource."""
    responses = []
    for resource in resources:
        entry: dict[str, Any] = {
            "error_code": ErrorCode.NONE,
            "error_message": None,
            "resource_type": resource.resource_type,
            "resource_name": resource.resource_name,
        }
        try:
            change(resource)
        except RefusedError as exc:
            entry.update(error_code=exc.code, error_message=str(exc))
        responses.append(entry)
    return {"throttle_time_ms": 0, "responses": responses}
