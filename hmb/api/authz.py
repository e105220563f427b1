"""Authorisation as handlers ask for it: may this connection do that to this resource?

Rules: with no authoriser configured (``authorizer.class.name`` empty),
everything is allowed, as in Kafka.  Otherwise the session's principal and
peer host are checked by the authoriser (:mod:`hmb.security.authorizer`).
Handlers answer a refusal with Kafka's code for the resource type
(TOPIC_/GROUP_/CLUSTER_/TRANSACTIONAL_ID_AUTHORIZATION_FAILED) and, where
Kafka hides what the principal may not describe, as if it did not exist.
"""

from __future__ import annotations

from collections.abc import Iterable

from hmb.api.context import RequestContext
from hmb.security.acl import CLUSTER_NAME, Operation, ResourceType
from kproto import ErrorCode

DENIED = {
    ResourceType.TOPIC: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    ResourceType.GROUP: ErrorCode.GROUP_AUTHORIZATION_FAILED,
    ResourceType.CLUSTER: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
    ResourceType.TRANSACTIONAL_ID: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
}
"""The error a refusal is answered with, per resource type."""


def allowed(ctx: RequestContext, operation: Operation, resource_type: ResourceType, name: str) -> bool:
    authorizer = ctx.services.authorizer
    if authorizer is None:
        return True
    session = ctx.session
    return authorizer.authorize(str(session.principal), session.host, operation, resource_type, name)


def cluster_allowed(ctx: RequestContext, operation: Operation) -> bool:
    return allowed(ctx, operation, ResourceType.CLUSTER, CLUSTER_NAME)


def topics_allowed(ctx: RequestContext, operation: Operation, names: Iterable[str]) -> set[str]:
    """Those of ``names`` the connection may ``operation`` (each decided once)."""
    if ctx.services.authorizer is None:
        return set(names)
    return {name for name in set(names) if allowed(ctx, operation, ResourceType.TOPIC, name)}


def group_allowed(ctx: RequestContext, operation: Operation, group_id: str) -> bool:
    return allowed(ctx, operation, ResourceType.GROUP, group_id)


def may_create_topic(ctx: RequestContext, name: str) -> bool:
    """Create on the cluster, or on the topic itself (Kafka accepts either)."""
    return cluster_allowed(ctx, Operation.CREATE) or allowed(ctx, Operation.CREATE, ResourceType.TOPIC, name)


#: What each resource type can be asked about (Kafka's supported operations per type):
#: the bits of an "authorized operations" field (KIP-430) are drawn from these.
SUPPORTED_OPERATIONS = {
    ResourceType.TOPIC: (
        Operation.READ,
        Operation.WRITE,
        Operation.CREATE,
        Operation.DELETE,
        Operation.ALTER,
        Operation.DESCRIBE,
        Operation.DESCRIBE_CONFIGS,
        Operation.ALTER_CONFIGS,
    ),
    ResourceType.GROUP: (Operation.READ, Operation.DESCRIBE, Operation.DELETE),
    ResourceType.CLUSTER: (
        Operation.CREATE,
        Operation.CLUSTER_ACTION,
        Operation.DESCRIBE_CONFIGS,
        Operation.ALTER_CONFIGS,
        Operation.IDEMPOTENT_WRITE,
        Operation.ALTER,
        Operation.DESCRIBE,
    ),
}

#: The "authorized operations" value when the client did not ask for it (Kafka's INT32_MIN).
OPERATIONS_NOT_ASKED = -(2**31)


def authorized_operations(ctx: RequestContext, resource_type: ResourceType, name: str) -> int:
    """KIP-430's bit field: bit ``op`` set for each operation this connection may do to the resource."""
    return sum(
        1 << int(op) for op in SUPPORTED_OPERATIONS[resource_type] if allowed(ctx, op, resource_type, name)
    )
