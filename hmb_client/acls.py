"""ACLs and SCRAM credentials as the admin client manages them (Kafka's Admin API).

``AclBinding`` and ``AclFilter`` carry kproto's ACL codes; the requests are
CreateAcls, DescribeAcls, DeleteAcls, DescribeUserScramCredentials and
AlterUserScramCredentials, each answered error for error as Kafka's Admin
client raises them (the first error of a batch).  A SCRAM password is
salted and hashed here, so only the salted password crosses the network.
"""

from __future__ import annotations

import os
from typing import Any, NamedTuple

from hmb_client.connection import CLIENT_VERSIONS, BrokerConnection
from hmb_client.errors import error_for
from hmb_client.sasl import scram_salted_password
from kproto import ApiKey
from kproto.acl import SCRAM_MECHANISMS, Operation, PatternType, Permission, ResourceType

SCRAM_NAMES = {number: name for name, number in SCRAM_MECHANISMS.items()}


class AclBinding(NamedTuple):
    resource_type: ResourceType
    resource_name: str
    pattern_type: PatternType
    principal: str
    host: str
    operation: Operation
    permission: Permission


class AclFilter(NamedTuple):
    resource_type: ResourceType = ResourceType.ANY
    resource_name: str | None = None
    pattern_type: PatternType = PatternType.ANY
    principal: str | None = None
    host: str | None = None
    operation: Operation = Operation.ANY
    permission: Permission = Permission.ANY

    def body(self) -> dict[str, Any]:
        return {
            "resource_type_filter": self.resource_type,
            "resource_name_filter": self.resource_name,
            "pattern_type_filter": self.pattern_type,
            "principal_filter": self.principal,
            "host_filter": self.host,
            "operation": self.operation,
            "permission_type": self.permission,
        }


def _binding(resource: Any, acl: Any) -> AclBinding:
    return AclBinding(
        ResourceType(resource.resource_type),
        resource.resource_name,
        PatternType(getattr(resource, "pattern_type", PatternType.LITERAL)),
        acl.principal,
        acl.host,
        Operation(acl.operation),
        Permission(acl.permission_type),
    )


def _raise(code: int, message: str | None, what: str) -> None:
    if code:
        raise error_for(code)(message or what)


async def create_acls(conn: BrokerConnection, bindings: list[AclBinding]) -> None:
    creations = [
        {
            "resource_type": b.resource_type,
            "resource_name": b.resource_name,
            "resource_pattern_type": b.pattern_type,
            "principal": b.principal,
            "host": b.host,
            "operation": b.operation,
            "permission_type": b.permission,
        }
        for b in bindings
    ]
    version = conn.pick(ApiKey.CREATE_ACLS, CLIENT_VERSIONS[ApiKey.CREATE_ACLS])
    body = await conn.request(ApiKey.CREATE_ACLS, version, {"creations": creations})
    for result in body.results:
        _raise(result.error_code, result.error_message, "creating ACLs")


async def describe_acls(conn: BrokerConnection, selection: AclFilter) -> list[AclBinding]:
    version = conn.pick(ApiKey.DESCRIBE_ACLS, CLIENT_VERSIONS[ApiKey.DESCRIBE_ACLS])
    body = await conn.request(ApiKey.DESCRIBE_ACLS, version, selection.body())
    _raise(body.error_code, body.error_message, "describing ACLs")
    return [_binding(resource, acl) for resource in body.resources for acl in resource.acls]


async def delete_acls(conn: BrokerConnection, selection: AclFilter) -> list[AclBinding]:
    version = conn.pick(ApiKey.DELETE_ACLS, CLIENT_VERSIONS[ApiKey.DELETE_ACLS])
    body = await conn.request(ApiKey.DELETE_ACLS, version, {"filters": [selection.body()]})
    removed = []
    for result in body.filter_results:
        _raise(result.error_code, result.error_message, "deleting ACLs")
        removed += [_binding(m, m) for m in result.matching_acls]
    return removed


async def describe_scram(conn: BrokerConnection, users: list[str] | None) -> dict[str, list[tuple[str, int]]]:
    """user -> [(mechanism, iterations)]; every user with credentials when ``users`` is None."""
    version = conn.pick(
        ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, CLIENT_VERSIONS[ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS]
    )
    request = {"users": None if users is None else [{"name": u} for u in users]}
    body = await conn.request(ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, version, request)
    _raise(body.error_code, body.error_message, "describing SCRAM credentials")
    out = {}
    for result in body.results:
        _raise(result.error_code, result.error_message, f"describing the credentials of {result.user}")
        out[result.user] = [
            (SCRAM_NAMES.get(c.mechanism, str(c.mechanism)), c.iterations) for c in result.credential_infos
        ]
    return out


async def alter_scram(
    conn: BrokerConnection,
    upsertions: list[tuple[str, str, str, int]],
    deletions: list[tuple[str, str]],
) -> None:
    """``upsertions``: (user, mechanism, password, iterations); ``deletions``: (user, mechanism)."""
    ups = []
    for user, mechanism, password, iterations in upsertions:
        salt = os.urandom(32)
        ups.append(
            {
                "name": user,
                "mechanism": SCRAM_MECHANISMS[mechanism],
                "iterations": iterations,
                "salt": salt,
                "salted_password": scram_salted_password(mechanism, password, salt, iterations),
            }
        )
    dels = [{"name": user, "mechanism": SCRAM_MECHANISMS[mechanism]} for user, mechanism in deletions]
    version = conn.pick(
        ApiKey.ALTER_USER_SCRAM_CREDENTIALS, CLIENT_VERSIONS[ApiKey.ALTER_USER_SCRAM_CREDENTIALS]
    )
    body = await conn.request(
        ApiKey.ALTER_USER_SCRAM_CREDENTIALS, version, {"deletions": dels, "upsertions": ups}
    )
    for result in body.results:
        _raise(result.error_code, result.error_message, f"altering the credentials of {result.user}")
