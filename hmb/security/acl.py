"""Kafka's ACL model as data: resource and pattern types, operations, permissions,
bindings and the filters DescribeAcls and DeleteAcls select bindings with.

The numbers are Kafka's wire codes (the ACL requests carry them); the names
are kafka-acls.sh's.  Rules of matching, as Kafka's StandardAuthorizer:

* a LITERAL binding applies to the resource of exactly its name, and a
  LITERAL ``*`` to every resource of its type; a PREFIXED binding to every
  resource whose name starts with its name;
* a binding's principal applies when it is the request's or ``User:*``;
  its host when it is the peer's or ``*``;
* a binding for ``All`` applies to every operation; an ALLOW for Read,
  Write, Delete or Alter also allows Describe, and an ALLOW for
  AlterConfigs also allows DescribeConfigs (a DENY implies nothing).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TypeVar

E = TypeVar("E", bound=enum.IntEnum)


class ResourceType(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


class Operation(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14


class Permission(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


CLUSTER_NAME = "kafka-cluster"  # the one cluster resource's name
WILDCARD = "*"
WILDCARD_PRINCIPAL = "User:*"

IMPLIED_BY_ALLOW = {
    Operation.DESCRIBE: frozenset({Operation.READ, Operation.WRITE, Operation.DELETE, Operation.ALTER}),
    Operation.DESCRIBE_CONFIGS: frozenset({Operation.ALTER_CONFIGS}),
}
"""operation -> the ALLOWed operations that allow it too."""


def enum_name(value: enum.IntEnum) -> str:
    """Kafka's spelling of an enum value: ``TRANSACTIONAL_ID`` -> ``TransactionalId``."""
    return "".join(part.capitalize() for part in value.name.split("_"))


def parse_enum(cls: type[E], text: str) -> E:
    """A kafka-acls.sh name (``Read``, ``transactional-id``, ``IdempotentWrite``) as the enum."""
    wanted = text.replace("-", "").replace("_", "").lower()
    for member in cls:
        if member.name.replace("_", "").lower() == wanted:
            return member
    raise ValueError(f"unknown {cls.__name__} {text!r}")


@dataclass(frozen=True)
class AclBinding:
    resource_type: ResourceType
    resource_name: str
    pattern_type: PatternType
    principal: str
    host: str
    operation: Operation
    permission: Permission

    def invalid_reason(self) -> str | None:
        """Why this binding cannot be created (Kafka's checks), or None."""
        if self.resource_type in (ResourceType.ANY, ResourceType.UNKNOWN):
            return "the resource type must be a concrete one"
        if self.pattern_type not in (PatternType.LITERAL, PatternType.PREFIXED):
            return "the pattern type must be LITERAL or PREFIXED"
        if self.operation in (Operation.ANY, Operation.UNKNOWN):
            return "the operation must be a concrete one"
        if self.permission not in (Permission.ALLOW, Permission.DENY):
            return "the permission must be ALLOW or DENY"
        if not self.resource_name:
            return "the resource name must not be empty"
        kind, sep, name = self.principal.partition(":")
        if not sep or not kind or not name:
            return f"the principal must be TYPE:NAME, got {self.principal!r}"
        if self.resource_type == ResourceType.CLUSTER and self.resource_name != CLUSTER_NAME:
            return f"the cluster resource is named {CLUSTER_NAME}"
        return None

    def applies_to_resource(self, resource_type: ResourceType, name: str) -> bool:
        if self.resource_type != resource_type:
            return False
        if self.pattern_type == PatternType.PREFIXED:
            return name.startswith(self.resource_name)
        return self.resource_name in (name, WILDCARD)

    def to_json(self) -> dict[str, object]:
        return {
            "resource_type": self.resource_type.name,
            "resource_name": self.resource_name,
            "pattern_type": self.pattern_type.name,
            "principal": self.principal,
            "host": self.host,
            "operation": self.operation.name,
            "permission": self.permission.name,
        }

    @classmethod
    def from_json(cls, data: dict[str, str]) -> AclBinding:
        return cls(
            ResourceType[data["resource_type"]],
            data["resource_name"],
            PatternType[data["pattern_type"]],
            data["principal"],
            data["host"],
            Operation[data["operation"]],
            Permission[data["permission"]],
        )


@dataclass(frozen=True)
class AclFilter:
    """What DescribeAcls and DeleteAcls select: None or ANY matches anything."""

    resource_type: ResourceType = ResourceType.ANY
    resource_name: str | None = None
    pattern_type: PatternType = PatternType.ANY
    principal: str | None = None
    host: str | None = None
    operation: Operation = Operation.ANY
    permission: Permission = Permission.ANY

    def invalid_reason(self) -> str | None:
        if ResourceType.UNKNOWN in (self.resource_type,) or self.pattern_type == PatternType.UNKNOWN:
            return "the filter has an unknown resource or pattern type"
        if self.operation == Operation.UNKNOWN or self.permission == Permission.UNKNOWN:
            return "the filter has an unknown operation or permission"
        return None

    def matches(self, acl: AclBinding) -> bool:
        if self.resource_type != ResourceType.ANY and acl.resource_type != self.resource_type:
            return False
        if not self._matches_pattern(acl):
            return False
        if self.principal is not None and acl.principal != self.principal:
            return False
        if self.host is not None and acl.host != self.host:
            return False
        if self.operation != Operation.ANY and acl.operation != self.operation:
            return False
        return self.permission == Permission.ANY or acl.permission == self.permission

    def _matches_pattern(self, acl: AclBinding) -> bool:
        if self.pattern_type == PatternType.MATCH:
            # every binding that would apply to a resource of this name
            if self.resource_name is None:
                return True
            if acl.pattern_type == PatternType.PREFIXED:
                return self.resource_name.startswith(acl.resource_name)
            return acl.resource_name in (self.resource_name, WILDCARD)
        if self.pattern_type != PatternType.ANY and acl.pattern_type != self.pattern_type:
            return False
        return self.resource_name is None or acl.resource_name == self.resource_name
