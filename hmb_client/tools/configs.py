"""``hmb configs describe|alter``: topic and broker settings, like kafka-configs.sh.

Rules of this module: the entity is named as Kafka's tool names it
(``--entity-type topics|brokers`` with ``--entity-name`` or
``--entity-default``, or the shortcuts ``--topic``, ``--broker``,
``--broker-defaults``).  ``describe`` shows the settings set on the entity
itself unless ``--all``; ``alter`` changes only the settings named
(IncrementalAlterConfigs), falling back to AlterConfigs with the entity's
other dynamic settings carried over when the broker lacks it.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from hmb_client.tools.common import (
    CliError,
    add_connection_options,
    add_json_option,
    add_parser,
    open_admin,
    parse_config_pairs,
    print_json,
    split_list,
)

if TYPE_CHECKING:
    from hmb_client.admin import Admin
    from hmb_client.admin_types import ConfigEntry, ConfigResource

TIMEOUT_MS = 10_000
ENTITY_TYPES = ("topics", "brokers")


def register(sub: Any) -> None:
    configs = sub.add_parser(
        "configs",
        help="describe and alter topic and broker settings",
        description="Describe and alter topic and broker settings (like Kafka's kafka-configs.sh).",
    )
    actions = configs.add_subparsers(dest="action", metavar="ACTION", required=True, help="one of:")

    describe = add_parser(
        actions,
        "describe",
        help="show the settings of topics or brokers",
        description=(
            "Show the settings set on a topic or broker (its dynamic configs), or every setting with "
            "--all, each with where its value comes from and the values it overrides (synonyms). "
            "Without a name, every topic (or every broker) is described."
        ),
        example="""
hmb configs describe --entity-type topics --entity-name orders
hmb configs describe --entity-type brokers --entity-default --all
hmb configs describe --topic orders --all --json""",
    )
    _add_entity_options(describe)
    describe.add_argument(
        "--all", action="store_true", help="list every setting, defaults included, not only those set"
    )
    add_json_option(describe)
    add_connection_options(describe, timeout_ms=TIMEOUT_MS)
    describe.set_defaults(func=run_describe)

    alter = add_parser(
        actions,
        "alter",
        help="set or delete settings of a topic or broker",
        description=(
            "Set (--add-config) or remove (--delete-config, back to the default) settings of one topic, "
            "one broker or the cluster-wide broker default. Settings not named are left as they are. "
            "A list value is written in brackets: --add-config cleanup.policy=[compact,delete]."
        ),
        example="""
hmb configs alter --entity-type topics --entity-name orders --add-config retention.ms=3600000,flush.ms=100
hmb configs alter --entity-type topics --entity-name orders --delete-config retention.ms
hmb configs alter --entity-type brokers --entity-default --add-config log.retention.ms=3600000""",
    )
    _add_entity_options(alter)
    alter.add_argument(
        "--add-config",
        action="append",
        default=[],
        metavar="NAME=VALUE[,NAME=VALUE...]",
        help="settings to set (repeatable)",
    )
    alter.add_argument(
        "--delete-config",
        action="append",
        default=[],
        metavar="NAME[,NAME...]",
        help="settings to remove from the entity, so that the default applies again (repeatable)",
    )
    add_json_option(alter)
    add_connection_options(alter, timeout_ms=TIMEOUT_MS)
    alter.set_defaults(func=run_alter)


def _add_entity_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("entity")
    group.add_argument("--entity-type", choices=ENTITY_TYPES, help="what to configure: topics or brokers")
    group.add_argument("--entity-name", metavar="NAME", help="the topic name, or the broker id")
    group.add_argument(
        "--entity-default", action="store_true", help="with brokers: the cluster-wide default of every broker"
    )
    group.add_argument("--topic", metavar="NAME", help="shortcut for --entity-type topics --entity-name NAME")
    group.add_argument("--broker", metavar="ID", help="shortcut for --entity-type brokers --entity-name ID")
    group.add_argument(
        "--broker-defaults", action="store_true", help="shortcut for --entity-type brokers --entity-default"
    )


def _entity(ns: argparse.Namespace) -> tuple[str, str | None]:
    """(entity type, name); name None = every entity of the type, "" = the broker default."""
    kind, name = ns.entity_type, ns.entity_name
    if ns.topic is not None:
        kind, name = "topics", ns.topic
    elif ns.broker is not None:
        kind, name = "brokers", ns.broker
    elif ns.broker_defaults:
        kind, name = "brokers", ""
    if kind is None:
        raise CliError("say what to configure: --entity-type topics|brokers (or --topic NAME)", code=2)
    if ns.entity_default:
        if kind != "brokers":
            raise CliError("--entity-default applies to brokers only; topics take --entity-name", code=2)
        name = ""
    if kind == "brokers" and name and not name.isdigit():
        raise CliError(f"a broker is named by its id, a number, not {name!r}", code=2)
    return kind, name


def _resources(admin: Admin, kind: str, name: str | None) -> list[ConfigResource]:
    from hmb_client.admin_types import ConfigResource

    if kind == "topics":
        existing = admin.topic_names(include_internal=True)
        if name is not None and name not in existing:
            raise CliError(f"topic {name!r} does not exist; see 'hmb topics list'")
        names = [name] if name is not None else sorted(admin.topic_names())
        return [ConfigResource.topic(n) for n in names]
    if name is not None:
        return [ConfigResource.broker(name)]
    return [ConfigResource.broker(b.node_id) for b in admin.brokers()]


def _label(resource: ConfigResource) -> str:
    from hmb_client.admin_types import ConfigResourceType

    if resource.restype == ConfigResourceType.TOPIC:
        return f"topic {resource.name}"
    return f"broker {resource.name}" if resource.name else "the default broker configs"


def _entry_json(e: ConfigEntry) -> dict[str, object]:
    return {
        "name": e.name,
        "value": e.value,
        "source": e.source.name,
        "read_only": e.read_only,
        "sensitive": e.sensitive,
        "synonyms": [{"name": s.name, "value": s.value, "source": s.source.name} for s in e.synonyms],
    }


def _entry_line(e: ConfigEntry) -> str:
    value = "null" if e.value is None else e.value
    synonyms = ", ".join(f"{s.source.name}:{s.name}={s.value}" for s in e.synonyms)
    flags = f"sensitive={str(e.sensitive).lower()}"
    if e.read_only:
        flags += " read-only=true"
    return f"  {e.name}={value} {flags} synonyms={{{synonyms}}}"


def run_describe(ns: argparse.Namespace) -> int:
    from hmb_client.admin_types import ConfigResourceType, ConfigSource

    kind, name = _entity(ns)
    with open_admin(ns) as admin:
        resources = _resources(admin, kind, name)
        described = admin.describe_configs(resources) if resources else {}
    shown: dict[ConfigResource, list[ConfigEntry]] = {}
    for resource in resources:
        entries = sorted(described.get(resource, {}).values())
        if not ns.all:  # what is set on this very entity
            if resource.restype == ConfigResourceType.TOPIC:
                own = ConfigSource.DYNAMIC_TOPIC_CONFIG
            elif resource.name:
                own = ConfigSource.DYNAMIC_BROKER_CONFIG
            else:
                own = ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG
            entries = [e for e in entries if e.source == own]
        shown[resource] = entries
    if ns.json:
        print_json(
            [
                {
                    "entity_type": kind,
                    "entity_name": r.name,
                    "configs": [_entry_json(e) for e in entries],
                }
                for r, entries in shown.items()
            ]
        )
        return 0
    for resource, entries in shown.items():
        print(f"{'All' if ns.all else 'Dynamic'} configs for {_label(resource)} are:")
        for e in entries:
            print(_entry_line(e))
    return 0


def run_alter(ns: argparse.Namespace) -> int:
    from hmb_client.admin_types import AlterConfigOp, AlterConfigOpType, ConfigResource
    from hmb_client.errors import UnsupportedVersionError

    kind, name = _entity(ns)
    if name is None:
        what = "--entity-name NAME" if kind == "topics" else "--entity-name ID or --entity-default"
        raise CliError(f"say which {kind[:-1]} to alter: {what}", code=2)
    added = parse_config_pairs(ns.add_config, "--add-config")
    deleted = [n for text in ns.delete_config for n in split_list(text)]
    if not added and not deleted:
        raise CliError("nothing to change: give --add-config NAME=VALUE and/or --delete-config NAME", code=2)
    if both := sorted(set(added) & set(deleted)):
        raise CliError(f"{', '.join(both)} is both added and deleted; name it once", code=2)
    resource = ConfigResource.topic(name) if kind == "topics" else ConfigResource.broker(name)
    ops = [AlterConfigOp(k, AlterConfigOpType.SET, v) for k, v in added.items()]
    ops += [AlterConfigOp(k, AlterConfigOpType.DELETE) for k in deleted]
    with open_admin(ns) as admin:
        _resources(admin, kind, name)  # a missing topic is named before anything changes
        try:
            admin.incremental_alter_configs({resource: ops})
        except UnsupportedVersionError:
            _alter_whole(admin, resource, added, deleted)
    if ns.json:
        print_json({"entity_type": kind, "entity_name": name, "set": added, "deleted": deleted})
    else:
        print(f"Completed updating config for {_label(resource)}.")
    return 0


def _alter_whole(admin: Admin, resource: ConfigResource, added: dict[str, str], deleted: list[str]) -> None:
    """AlterConfigs replaces every dynamic setting: carry over the ones not changed."""
    from hmb_client.admin_types import ConfigSource

    current = admin.describe_configs([resource], include_synonyms=False)[resource]
    dynamic = {
        ConfigSource.DYNAMIC_TOPIC_CONFIG,
        ConfigSource.DYNAMIC_BROKER_CONFIG,
        ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG,
    }
    kept: dict[str, str | None] = {
        e.name: e.value for e in current.values() if e.source in dynamic and e.name not in deleted
    }
    admin.alter_configs({resource: {**kept, **added}})
