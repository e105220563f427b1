"""ACL bindings and filters to and from the bodies of CreateAcls, DescribeAcls and DeleteAcls.

Rules: v0 of these requests has no pattern type, which is LITERAL (the
grammar's default); a code Kafka has not defined reads as UNKNOWN, which
the binding's and the filter's checks refuse with INVALID_REQUEST.  Without
an authoriser Kafka answers SECURITY_DISABLED.
"""

from __future__ import annotations

import enum
from typing import Any, TypeVar

from hmb.security.acl import AclBinding, AclFilter, Operation, PatternType, Permission, ResourceType

E = TypeVar("E", bound=enum.IntEnum)

NO_AUTHORIZER = "No Authorizer is configured on the broker"


def _code(cls: type[E], value: int) -> E:
    try:
        return cls(value)
    except ValueError:
        return cls(0)  # UNKNOWN


def binding_of(creation: Any) -> AclBinding:
    return AclBinding(
        _code(ResourceType, creation.resource_type),
        creation.resource_name,
        _code(PatternType, getattr(creation, "resource_pattern_type", PatternType.LITERAL)),
        creation.principal,
        creation.host,
        _code(Operation, creation.operation),
        _code(Permission, creation.permission_type),
    )


def filter_of(body: Any) -> AclFilter:
    return AclFilter(
        _code(ResourceType, body.resource_type_filter),
        body.resource_name_filter,
        _code(PatternType, getattr(body, "pattern_type_filter", PatternType.LITERAL)),
        body.principal_filter,
        body.host_filter,
        _code(Operation, body.operation),
        _code(Permission, body.permission_type),
    )
