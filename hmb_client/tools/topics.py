"""``hmb topics create|alter|list|describe``: topic administration (like kafka-topics.sh)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from hmb_client.tools.common import (
    CliError,
    add_connection_options,
    add_json_option,
    add_parser,
    open_admin,
    parse_config_pairs,
    positive_int,
    print_json,
)

if TYPE_CHECKING:
    from hmb_client.admin import TopicDescription

TIMEOUT_MS = 5_000


def register(sub: Any) -> None:
    topics = sub.add_parser(
        "topics",
        help="create, alter, list and describe topics",
        description="Create, alter, list and describe topics (like Kafka's kafka-topics.sh).",
    )
    actions = topics.add_subparsers(dest="action", metavar="ACTION", required=True, help="one of:")

    create = add_parser(
        actions,
        "create",
        help="create a topic",
        description=(
            "Create a topic, with topic settings given by --config. A broker without CreateTopics "
            "(Kafka 0.8) creates it when its metadata is asked for, with its num.partitions and no settings."
        ),
        example="""
hmb topics create orders --partitions 6 --config retention.ms=86400000 --config cleanup.policy=compact""",
    )
    create.add_argument("topic", metavar="TOPIC", help="name of the topic (letters, digits, '.', '_', '-')")
    create.add_argument(
        "--partitions",
        type=positive_int,
        metavar="N",
        help=(
            "the partition count you expect; an error if the broker created another one (start the "
            "broker with --override num.partitions=N to choose it)"
        ),
    )
    create.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a topic setting, e.g. retention.ms=86400000 (repeatable)",
    )
    create.add_argument(
        "--if-not-exists", action="store_true", help="succeed quietly when the topic already exists"
    )
    add_json_option(create)
    add_connection_options(create, timeout_ms=TIMEOUT_MS)
    create.set_defaults(func=run_create)

    alter = add_parser(
        actions,
        "alter",
        help="add partitions to a topic",
        description=(
            "Raise a topic's partition count (it can never shrink). Keyed records then spread over "
            "the new partitions too, so a key may land on another partition than before."
        ),
        example="""
hmb topics alter orders --partitions 12""",
    )
    alter.add_argument("topic", metavar="TOPIC", help="the topic")
    alter.add_argument(
        "--partitions", type=positive_int, metavar="N", required=True, help="the new partition count"
    )
    alter.add_argument(
        "--validate-only", action="store_true", help="only check that the change would be accepted"
    )
    add_json_option(alter)
    add_connection_options(alter, timeout_ms=TIMEOUT_MS)
    alter.set_defaults(func=run_alter)

    lst = actions.add_parser(
        "list", help="list topic names", description="Print the topic names, one a line."
    )
    lst.add_argument(
        "--include-internal",
        action="store_true",
        help="also list internal topics (names starting with __, e.g. __consumer_offsets)",
    )
    add_connection_options(lst, timeout_ms=TIMEOUT_MS)
    lst.set_defaults(func=run_list)

    describe = actions.add_parser(
        "describe",
        help="show partitions, leaders and offsets",
        description=(
            "Show each partition of the topics: its leader broker, earliest and latest offsets, "
            "how many messages it holds (latest - earliest), and its replicas, in-sync replicas "
            "and offline replicas (as kafka-topics --describe; '-' for none)."
        ),
    )
    describe.add_argument("topics", metavar="TOPIC", nargs="*", help="topics to describe (default: all)")
    describe.add_argument(
        "--include-internal",
        action="store_true",
        help="with no TOPIC, also describe internal topics (names starting with __)",
    )
    describe.add_argument(
        "--control",
        metavar="HOST:PORT",
        help=(
            "hmb's control endpoint (control.listener): also show the log cleaner's state of each "
            "compacted partition (dirty ratio, last cleaning, bytes cleaned), which the Kafka "
            "protocol has no field for"
        ),
    )
    add_connection_options(describe, timeout_ms=TIMEOUT_MS)
    describe.set_defaults(func=run_describe)


def run_create(ns: argparse.Namespace) -> int:
    from hmb_client.admin import TopicAlreadyExistsError

    configs = parse_config_pairs(ns.config, "--config")
    with open_admin(ns) as admin:
        try:
            desc = admin.create_topic(
                ns.topic,
                num_partitions=ns.partitions,
                timeout_s=ns.request_timeout_ms / 1000,
                configs=configs,
            )
        except TopicAlreadyExistsError:
            if ns.if_not_exists:
                return 0
            raise CliError(
                f"topic {ns.topic!r} already exists; pass --if-not-exists to accept that"
            ) from None
    n = len(desc.partitions)
    if ns.json:
        print_json({"topic": ns.topic, "partitions": n, "configs": configs})
    else:
        print(f"Created topic {ns.topic} with {n} partition{'s' if n != 1 else ''}.")
    return 0


def run_alter(ns: argparse.Namespace) -> int:
    from hmb_client.admin import UnknownTopicOrPartitionError

    with open_admin(ns) as admin:
        try:
            before = len(admin.describe_topic(ns.topic).partitions)
        except UnknownTopicOrPartitionError:
            raise CliError(f"topic {ns.topic!r} does not exist; see 'hmb topics list'") from None
        if ns.partitions < before:
            raise CliError(
                f"topic {ns.topic!r} has {before} partitions and a topic cannot shrink; give --partitions "
                f"{before} or more"
            )
        if ns.partitions > before:
            admin.create_partitions(
                {ns.topic: ns.partitions},
                validate_only=ns.validate_only,
                timeout_s=ns.request_timeout_ms / 1000,
            )
    if ns.json:
        print_json({"topic": ns.topic, "partitions_before": before, "partitions": ns.partitions})
    elif ns.partitions == before:
        print(f"Topic {ns.topic} already has {before} partitions.")
    elif ns.validate_only:
        print(f"Topic {ns.topic} can grow from {before} to {ns.partitions} partitions (nothing changed).")
    else:
        print(f"Topic {ns.topic} now has {ns.partitions} partitions (was {before}).")
    return 0


def run_list(ns: argparse.Namespace) -> int:
    with open_admin(ns) as admin:
        names = admin.topic_names(include_internal=ns.include_internal)
    for name in sorted(names):
        print(name)
    return 0


def run_describe(ns: argparse.Namespace) -> int:
    from hmb_client.admin import UnknownTopicOrPartitionError

    with open_admin(ns) as admin:
        if ns.topics:
            descriptions = []
            for name in ns.topics:
                try:
                    descriptions.append(admin.describe_topic(name))
                except UnknownTopicOrPartitionError:
                    raise CliError(f"topic {name!r} does not exist") from None
        else:
            descriptions = list(admin.list_topics(include_internal=ns.include_internal).values())
    if not descriptions:
        print("no topics", file=sys.stderr)
        return 0
    print(format_table(descriptions))
    if ns.control:
        from hmb_client.tools.control import control_call

        wanted = {d.name for d in descriptions}
        states = [s for s in control_call(ns.control, "cleaner") if s["topic"] in wanted]
        print()
        print(format_cleaner_table(states) if states else "no compacted partition among these topics")
    return 0


def format_cleaner_table(states: list[dict[str, Any]]) -> str:
    """The log cleaner's state per compacted partition, as the control endpoint reports it."""
    import datetime

    header = ("TOPIC", "PARTITION", "DIRTY_RATIO", "LAST_CLEAN", "CLEANINGS", "BYTES_CLEANED", "FIRST_DIRTY")
    rows = [header]
    for s in sorted(states, key=lambda s: (s["topic"], s["partition"])):
        last = s["last_clean_time_ms"]
        when = (
            datetime.datetime.fromtimestamp(last / 1000, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            if last >= 0
            else "never"
        )
        rows.append(
            (
                s["topic"],
                str(s["partition"]),
                f"{s['dirty_ratio']:.2f}",
                when,
                str(s["cleanings"]),
                str(s["bytes_cleaned"]),
                str(s["first_dirty_offset"]),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = []
    for r in rows:
        cells = [r[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(r[1:], widths[1:], strict=True)]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def _brokers(ids: tuple[int, ...]) -> str:
    """Broker ids as kafka-topics writes them (``1,2,3``); ``-`` for none."""
    return ",".join(map(str, ids)) or "-"


def format_table(descriptions: list[TopicDescription]) -> str:
    header = ("TOPIC", "PARTITION", "LEADER", "EARLIEST", "LATEST", "MESSAGES", "REPLICAS", "ISR", "OFFLINE")
    rows = [header]
    for d in descriptions:
        for p in d.partitions:
            rows.append(
                (
                    d.name,
                    str(p.partition),
                    str(p.leader) if p.leader >= 0 else "none",
                    str(p.earliest_offset),
                    str(p.latest_offset),
                    str(p.messages),
                    _brokers(p.replicas),
                    _brokers(p.isr),
                    _brokers(p.offline),
                )
            )
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = []
    for r in rows:
        cells = [r[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(r[1:], widths[1:], strict=True)]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)
