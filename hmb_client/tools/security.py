"""``hmb users add|delete|list`` (SCRAM credentials) and ``hmb acls add|list|remove``.

``hmb acls`` takes kafka-acls.sh's flags: ``--allow-principal``/
``--deny-principal`` (repeatable), ``--allow-host``/``--deny-host``,
``--operation`` (repeatable; Kafka's names: Read, Write, Create, Delete,
Alter, Describe, ClusterAction, DescribeConfigs, AlterConfigs,
IdempotentWrite, All), one resource: ``--topic``, ``--group``,
``--cluster`` or ``--transactional-id``, ``--resource-pattern-type``, and
the shortcuts ``--producer`` (Write, Describe, Create on the topic) and
``--consumer`` (Read, Describe on the topic, Read on the group).
``hmb users`` does what ``kafka-configs.sh --entity-type users
--add-config SCRAM-SHA-256=[password=...]`` does.
"""

from __future__ import annotations

import argparse
from typing import Any

from hmb_client.tools.common import CliError, add_connection_options, open_admin, positive_int

TIMEOUT_MS = 5_000
MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512")


def register(sub: Any) -> None:
    _register_users(sub)
    _register_acls(sub)


# ------------------------------------------------------------------ users


def _register_users(sub: Any) -> None:
    users = sub.add_parser(
        "users",
        help="add, delete and list SCRAM users",
        description="Manage the broker's SCRAM credentials (like kafka-configs.sh --entity-type users).",
    )
    actions = users.add_subparsers(dest="action", metavar="ACTION", required=True, help="one of:")
    add = actions.add_parser("add", help="add a user, or change a user's password")
    add.add_argument("user", metavar="USER")
    add.add_argument("--password", required=True, help="the password (salted and hashed before it is sent)")
    add.add_argument("--mechanism", choices=MECHANISMS, action="append", help="repeatable (default both)")
    add.add_argument("--iterations", type=positive_int, default=4096, help="PBKDF2 iterations (default 4096)")
    add_connection_options(add, timeout_ms=TIMEOUT_MS)
    add.set_defaults(func=run_users_add)
    delete = actions.add_parser("delete", help="delete a user's credentials")
    delete.add_argument("user", metavar="USER")
    delete.add_argument("--mechanism", choices=MECHANISMS, action="append", help="repeatable (default both)")
    add_connection_options(delete, timeout_ms=TIMEOUT_MS)
    delete.set_defaults(func=run_users_delete)
    lst = actions.add_parser("list", help="list users and their mechanisms")
    add_connection_options(lst, timeout_ms=TIMEOUT_MS)
    lst.set_defaults(func=run_users_list)


def run_users_add(ns: argparse.Namespace) -> int:
    with open_admin(ns) as admin:
        for mechanism in ns.mechanism or MECHANISMS:
            admin.upsert_user_scram_credential(ns.user, mechanism, ns.password, ns.iterations)
    return 0


def run_users_delete(ns: argparse.Namespace) -> int:
    with open_admin(ns) as admin:
        have = admin.describe_user_scram_credentials(None).get(ns.user, [])
        wanted = ns.mechanism or [m for m, _ in have]
        if not wanted:
            raise CliError(f"user {ns.user!r} has no SCRAM credentials")
        for mechanism in wanted:
            admin.delete_user_scram_credential(ns.user, mechanism)
    return 0


def run_users_list(ns: argparse.Namespace) -> int:
    with open_admin(ns) as admin:
        for user, credentials in sorted(admin.describe_user_scram_credentials(None).items()):
            listed = ", ".join(f"{m} (iterations={i})" for m, i in credentials)
            print(f"{user}\t{listed}")
    return 0


# ------------------------------------------------------------------ acls


def _register_acls(sub: Any) -> None:
    acls = sub.add_parser(
        "acls", help="add, list and remove ACLs", description="Manage the broker's ACLs (like kafka-acls.sh)."
    )
    actions = acls.add_subparsers(dest="action", metavar="ACTION", required=True, help="one of:")
    for name, help_text, func in (
        ("add", "add ACLs", run_acls_add),
        ("list", "list ACLs (all, or those of a resource)", run_acls_list),
        ("remove", "remove ACLs", run_acls_remove),
    ):
        parser = actions.add_parser(name, help=help_text)
        resource = parser.add_argument_group("resource (one of)")
        resource.add_argument("--topic", metavar="TOPIC")
        resource.add_argument("--group", metavar="GROUP")
        resource.add_argument("--cluster", action="store_true")
        resource.add_argument("--transactional-id", metavar="ID")
        parser.add_argument(
            "--resource-pattern-type",
            default="literal" if name == "add" else None,
            help="literal or prefixed (list/remove also: any, match)",
        )
        parser.add_argument("--allow-principal", action="append", default=[], metavar="TYPE:NAME")
        parser.add_argument("--deny-principal", action="append", default=[], metavar="TYPE:NAME")
        parser.add_argument("--allow-host", action="append", default=[], metavar="HOST")
        parser.add_argument("--deny-host", action="append", default=[], metavar="HOST")
        parser.add_argument("--operation", action="append", default=[], metavar="OPERATION")
        parser.add_argument("--producer", action="store_true", help="Write, Describe, Create on the topic")
        parser.add_argument(
            "--consumer", action="store_true", help="Read, Describe on the topic, Read on the group"
        )
        parser.add_argument("--principal", metavar="TYPE:NAME", help="list: only this principal's ACLs")
        add_connection_options(parser, timeout_ms=TIMEOUT_MS)
        parser.set_defaults(func=func)


def _resources(ns: argparse.Namespace) -> list[tuple[Any, str]]:
    from kproto.acl import ResourceType

    found = []
    if ns.topic is not None:
        found.append((ResourceType.TOPIC, ns.topic))
    if ns.group is not None:
        found.append((ResourceType.GROUP, ns.group))
    if ns.cluster:
        found.append((ResourceType.CLUSTER, "kafka-cluster"))
    if ns.transactional_id is not None:
        found.append((ResourceType.TRANSACTIONAL_ID, ns.transactional_id))
    return found


def _bindings(ns: argparse.Namespace) -> list[Any]:
    from hmb_client.acls import AclBinding
    from kproto.acl import Operation, PatternType, Permission, ResourceType, parse_enum

    try:
        pattern = parse_enum(PatternType, ns.resource_pattern_type or "literal")
        operations = [parse_enum(Operation, o) for o in ns.operation]
    except ValueError as exc:
        raise CliError(str(exc), code=2) from None
    wanted: list[tuple[Any, str, Any]] = []
    resources = _resources(ns)
    for rtype, name in resources:
        wanted += [(rtype, name, op) for op in operations]
    if ns.producer or ns.consumer:
        if ns.topic is None:
            raise CliError("--producer and --consumer need --topic", code=2)
        if ns.producer:
            wanted += [
                (ResourceType.TOPIC, ns.topic, op)
                for op in (Operation.WRITE, Operation.DESCRIBE, Operation.CREATE)
            ]
        if ns.consumer:
            if ns.group is None:
                raise CliError("--consumer needs --group", code=2)
            wanted += [(ResourceType.TOPIC, ns.topic, op) for op in (Operation.READ, Operation.DESCRIBE)]
            wanted.append((ResourceType.GROUP, ns.group, Operation.READ))
    if not wanted:
        raise CliError(
            "name a resource (--topic, --group, --cluster, --transactional-id) and --operation", code=2
        )
    people = [(p, Permission.ALLOW, ns.allow_host or ["*"]) for p in ns.allow_principal]
    people += [(p, Permission.DENY, ns.deny_host or ["*"]) for p in ns.deny_principal]
    if not people:
        raise CliError("name a principal with --allow-principal or --deny-principal", code=2)
    return [
        AclBinding(rtype, name, pattern, principal, host, op, permission)
        for rtype, name, op in dict.fromkeys(wanted)
        for principal, permission, hosts in people
        for host in hosts
    ]


def _print(bindings: list[Any]) -> None:
    from kproto.acl import enum_name

    for b in bindings:
        print(
            f"{enum_name(b.resource_type)}:{enum_name(b.pattern_type).upper()}:{b.resource_name}\t"
            f"principal={b.principal} host={b.host} operation={enum_name(b.operation)} "
            f"permission={enum_name(b.permission)}"
        )


def run_acls_add(ns: argparse.Namespace) -> int:
    bindings = _bindings(ns)
    with open_admin(ns) as admin:
        admin.create_acls(bindings)
    _print(bindings)
    return 0


def _filters(ns: argparse.Namespace) -> list[Any]:
    from hmb_client.acls import AclFilter
    from kproto.acl import PatternType, ResourceType, parse_enum

    pattern = (
        parse_enum(PatternType, ns.resource_pattern_type) if ns.resource_pattern_type else PatternType.ANY
    )
    out = [AclFilter(rtype, name, pattern, ns.principal) for rtype, name in _resources(ns)]
    return out or [AclFilter(ResourceType.ANY, None, pattern, ns.principal)]


def run_acls_list(ns: argparse.Namespace) -> int:
    with open_admin(ns) as admin:
        for selection in _filters(ns):
            _print(admin.describe_acls(selection))
    return 0


def run_acls_remove(ns: argparse.Namespace) -> int:
    from hmb_client.acls import AclFilter

    if ns.allow_principal or ns.deny_principal or ns.operation or ns.producer or ns.consumer:
        selections = [AclFilter(*b) for b in _bindings(ns)]
    else:
        if not _resources(ns):
            raise CliError("name the resource whose ACLs to remove", code=2)
        selections = _filters(ns)
    with open_admin(ns) as admin:
        for selection in selections:
            _print(admin.delete_acls(selection))
    return 0
