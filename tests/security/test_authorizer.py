"""The authoriser's decisions (Kafka's StandardAuthorizer semantics) and its persistence."""

from __future__ import annotations

from pathlib import Path

import pytest

from hmb.security.acl import (
    AclBinding,
    AclFilter,
    Operation,
    PatternType,
    Permission,
    ResourceType,
    parse_enum,
)
from hmb.security.authorizer import Authorizer

T, G, C = ResourceType.TOPIC, ResourceType.GROUP, ResourceType.CLUSTER
LIT, PRE = PatternType.LITERAL, PatternType.PREFIXED
ALLOW, DENY = Permission.ALLOW, Permission.DENY


def acl(
    name: str,
    op: Operation,
    permission: Permission = ALLOW,
    principal: str = "User:alice",
    rtype: ResourceType = T,
    pattern: PatternType = LIT,
    host: str = "*",
) -> AclBinding:
    return AclBinding(rtype, name, pattern, principal, host, op, permission)


def make(*bindings: AclBinding, **kw: object) -> Authorizer:
    authorizer = Authorizer(**kw)  # type: ignore[arg-type]
    authorizer.create(bindings)
    return authorizer


def can(
    a: Authorizer, op: Operation, name: str = "orders", who: str = "User:alice", host: str = "10.0.0.1"
) -> bool:
    return a.authorize(who, host, op, T, name)


def test_write_does_not_allow_read_but_implies_describe() -> None:
    a = make(acl("orders", Operation.WRITE))
    assert can(a, Operation.WRITE) and can(a, Operation.DESCRIBE)
    assert not can(a, Operation.READ)
    assert not can(a, Operation.WRITE, who="User:bob")  # an ACL names the topic: others are denied


def test_deny_wins_over_allow_and_all() -> None:
    a = make(acl("orders", Operation.ALL), acl("orders", Operation.READ, DENY))
    assert can(a, Operation.WRITE) and not can(a, Operation.READ)
    b = make(acl("orders", Operation.READ), acl("*", Operation.ALL, DENY, principal="User:*"))
    assert not can(b, Operation.READ)


def test_deny_describe_is_not_implied_by_deny_read() -> None:
    a = make(acl("orders", Operation.DESCRIBE), acl("orders", Operation.READ, DENY))
    assert can(a, Operation.DESCRIBE) and not can(a, Operation.READ)


def test_prefixed_and_wildcard() -> None:
    a = make(acl("logs-", Operation.READ, pattern=PRE), acl("*", Operation.DESCRIBE, principal="User:*"))
    assert can(a, Operation.READ, "logs-app") and not can(a, Operation.READ, "logsapp")
    assert can(a, Operation.DESCRIBE, "anything", who="User:zed")
    assert not can(a, Operation.READ, "anything", who="User:zed")


def test_host_matching() -> None:
    a = make(acl("orders", Operation.READ, host="10.0.0.1"))
    assert can(a, Operation.READ, host="10.0.0.1") and not can(a, Operation.READ, host="10.0.0.2")


def test_no_acl_found_and_super_users() -> None:
    assert not can(make(acl("other", Operation.READ)), Operation.READ)
    assert can(make(acl("other", Operation.READ), allow_everyone_if_no_acl_found=True), Operation.READ)
    # once any ACL names the resource, the default no longer applies
    assert not can(
        make(acl("orders", Operation.READ), allow_everyone_if_no_acl_found=True), Operation.READ, who="User:b"
    )
    sup = make(acl("orders", Operation.ALL, DENY, principal="User:*"), super_users=["User:root"])
    assert can(sup, Operation.DELETE, who="User:root") and not can(sup, Operation.DELETE)


def test_alter_configs_implies_describe_configs() -> None:
    a = make(acl("kafka-cluster", Operation.ALTER_CONFIGS, rtype=C))
    assert a.authorize("User:alice", "h", Operation.DESCRIBE_CONFIGS, C, "kafka-cluster")
    assert not a.authorize("User:alice", "h", Operation.ALTER, C, "kafka-cluster")


def test_filters_describe_and_delete(tmp_path: Path) -> None:
    path = tmp_path / "acls.json"
    a = Authorizer(path)
    bindings = [
        acl("orders", Operation.READ),
        acl("logs-", Operation.WRITE, pattern=PRE),
        acl("g1", Operation.READ, rtype=G, principal="User:bob"),
    ]
    a.create(bindings)
    a.create(bindings[:1])  # twice: kept once
    assert len(a.acls()) == 3
    assert a.acls(AclFilter(ResourceType.TOPIC, "logs-x", PatternType.MATCH)) == [bindings[1]]
    assert a.acls(AclFilter(principal="User:bob")) == [bindings[2]]
    assert a.acls(AclFilter(ResourceType.TOPIC, "logs-", PatternType.LITERAL)) == []
    again = Authorizer(path)  # persisted
    assert again.acls() == bindings
    assert again.delete(AclFilter(ResourceType.TOPIC)) == bindings[:2]
    assert Authorizer(path).acls() == bindings[2:]


def test_invalid_bindings_are_named() -> None:
    assert acl("x", Operation.ANY).invalid_reason()
    assert acl("x", Operation.READ, pattern=PatternType.MATCH).invalid_reason()
    assert acl("other", Operation.ALTER, rtype=C).invalid_reason()
    assert acl("x", Operation.READ, principal="alice").invalid_reason()
    assert acl("x", Operation.READ).invalid_reason() is None


@pytest.mark.parametrize(
    ("cls", "text", "value"),
    [
        (Operation, "IdempotentWrite", Operation.IDEMPOTENT_WRITE),
        (Operation, "describe-configs", Operation.DESCRIBE_CONFIGS),
        (ResourceType, "TransactionalId", ResourceType.TRANSACTIONAL_ID),
        (PatternType, "prefixed", PatternType.PREFIXED),
    ],
)
def test_kafka_acls_names(cls: type, text: str, value: object) -> None:
    assert parse_enum(cls, text) == value
