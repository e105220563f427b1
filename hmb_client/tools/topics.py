"""``hmb topics create|list|describe``: topic administration (like kafka-topics.sh)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from hmb_client.tools.common import CliError, add_connection_options, open_admin, positive_int

if TYPE_CHECKING:
    from hmb_client.admin import TopicDescription

TIMEOUT_MS = 5_000


def register(sub: Any) -> None:
    topics = sub.add_parser(
        "topics",
        help="create, list and describe topics",
        description="Create, list and describe topics (like Kafka's kafka-topics.sh).",
    )
    actions = topics.add_subparsers(dest="action", metavar="ACTION", required=True, help="one of:")

    create = actions.add_parser(
        "create",
        help="create a topic",
        description=(
            "Create a topic. The broker speaks Kafka 0.8, which has no CreateTopics request: the "
            "topic is created by asking for its metadata, and gets the broker's num.partitions."
        ),
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
        "--if-not-exists", action="store_true", help="succeed quietly when the topic already exists"
    )
    add_connection_options(create, timeout_ms=TIMEOUT_MS)
    create.set_defaults(func=run_create)

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
            "and how many messages it holds (latest - earliest)."
        ),
    )
    describe.add_argument("topics", metavar="TOPIC", nargs="*", help="topics to describe (default: all)")
    describe.add_argument(
        "--include-internal",
        action="store_true",
        help="with no TOPIC, also describe internal topics (names starting with __)",
    )
    add_connection_options(describe, timeout_ms=TIMEOUT_MS)
    describe.set_defaults(func=run_describe)


def run_create(ns: argparse.Namespace) -> int:
    from hmb_client.admin import TopicAlreadyExistsError

    with open_admin(ns) as admin:
        try:
            desc = admin.create_topic(
                ns.topic, num_partitions=ns.partitions, timeout_s=ns.request_timeout_ms / 1000
            )
        except TopicAlreadyExistsError:
            if ns.if_not_exists:
                return 0
            raise CliError(f"topic {ns.topic!r} already exists") from None
    n = len(desc.partitions)
    print(f"Created topic {ns.topic} with {n} partition{'s' if n != 1 else ''}.")
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
    return 0


def format_table(descriptions: list[TopicDescription]) -> str:
    header = ("TOPIC", "PARTITION", "LEADER", "EARLIEST", "LATEST", "MESSAGES")
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
                )
            )
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = []
    for r in rows:
        cells = [r[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(r[1:], widths[1:], strict=True)]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)
