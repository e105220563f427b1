"""Kafka's ACL model: bindings and the filters DescribeAcls and DeleteAcls select
bindings with (the codes of resource and pattern types, operations and
permissions are the protocol's, in :mod:`kproto.acl`).

Rules of matching, as Kafka's StandardAuthorizer:

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

from dataclasses import dataclass

from kproto.acl import Operation, PatternType, Permission, ResourceType, enum_name, parse_enum

__all__ = [
    "AclBinding",
    "AclFilter",
    "Operation",
    "PatternType",
    "Permission",
    "ResourceType",
    "enum_name",
    "parse_enum",
]


CLUSTER_NAME = "kafka-cluster"  # the one cluster resource's name
WILDCARD = "*"
WILDCARD_PRINCIPAL = "User:*"

IMPLIED_BY_ALLOW = {
    Operation.DESCRIBE: frozenset({Operation.READ, Operation.WRITE, Operation.DELETE, Operation.ALTER}),
    Operation.DESCRIBE_CONFIGS: frozenset({Operation.ALTER_CONFIGS}),
}
"""operation -> the ALLOWed operations that allow it too."""


@dataclass(frozen=True)
class AclBinding:
    """One ACL as Kafka stores it: who may (or may not) do what to which resources, from which host."""

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
