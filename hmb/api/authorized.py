"""Authorized operations as responses report them (KIP-430): a bit per ACL operation.

A client that asks (DescribeCluster's ``include_cluster_authorized_operations``,
and later DescribeGroups, Metadata and DescribeTopicPartitions) gets a bit
field with bit ``1 << code`` set for each operation of the resource it may
perform, codes being Kafka's ``AclOperation`` numbers; one that does not ask
gets :data:`OMITTED` (INT32_MIN).  Which operations exist per resource type
is Kafka's table; which of them a client may perform is the authoriser's
call.  There is no authoriser yet: every client may do everything, so the
answer is every operation the resource supports.  The functions below are
the one place that decides it.
"""

from __future__ import annotations

from enum import IntEnum

from hmb.api.context import RequestContext

OMITTED = -(2**31)  # "not requested" (or not known)


class AclOperation(IntEnum):
    """Kafka's ACL operation codes (the bit numbers of authorized-operations fields)."""

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


#: The operations Kafka defines on the cluster resource.
CLUSTER_OPERATIONS = (
    AclOperation.CREATE,
    AclOperation.CLUSTER_ACTION,
    AclOperation.DESCRIBE_CONFIGS,
    AclOperation.ALTER_CONFIGS,
    AclOperation.IDEMPOTENT_WRITE,
    AclOperation.ALTER,
    AclOperation.DESCRIBE,
)


def bits(operations: tuple[AclOperation, ...]) -> int:
    """The bit field of ``operations``."""
    return sum(1 << op for op in set(operations))


def cluster_operations(ctx: RequestContext) -> int:
    """The cluster operations the client of ``ctx`` may perform (no authoriser: all of them)."""
    return bits(CLUSTER_OPERATIONS)
