"""``hmb groups list|describe|reset-offsets|delete|delete-offsets``: consumer
groups, like kafka-consumer-groups.sh.

Rules of this module: columns and messages are Kafka's tool's, so what a
user knows from it reads the same here.  ``describe`` shows, per partition
the group has an offset for or a member is assigned, the committed offset,
the log end offset and the lag between them.  ``reset-offsets`` only plans
unless ``--execute`` (as Kafka), and refuses a group with active members.
New offsets stay inside each partition's [earliest, latest], as Kafka clamps them.
"""

from __future__ import annotations

import argparse
import datetime
import sys
from typing import TYPE_CHECKING, Any

from hmb_client.tools.common import (
    CliError,
    add_connection_options,
    add_json_option,
    add_parser,
    open_admin,
    print_json,
    print_table,
    split_list,
)

if TYPE_CHECKING:
    from hmb_client.admin import Admin
    from hmb_client.admin_types import GroupDescription
    from hmb_client.structs import TopicPartition

TIMEOUT_MS = 10_000
INACTIVE = ("Empty", "Dead")


def register(sub: Any) -> None:
    groups = sub.add_parser(
        "groups",
        help="list, describe, reset and delete consumer groups",
        description="Consumer groups (like Kafka's kafka-consumer-groups.sh).",
    )
    actions = groups.add_subparsers(dest="action", metavar="ACTION", required=True, help="one of:")

    lst = add_parser(
        actions,
        "list",
        help="list the consumer groups",
        description="Print the group ids, one a line; with --state, a table of each group's state.",
        example="""
hmb groups list
hmb groups list --state
hmb groups list --state Stable,Empty --json""",
    )
    lst.add_argument(
        "--state",
        nargs="?",
        const="",
        metavar="STATE[,STATE...]",
        help=(
            "show each group's state; with a value, only groups in those states "
            "(Stable, Empty, PreparingRebalance, CompletingRebalance, Dead)"
        ),
    )
    add_json_option(lst)
    add_connection_options(lst, timeout_ms=TIMEOUT_MS)
    lst.set_defaults(func=run_list)

    describe = add_parser(
        actions,
        "describe",
        help="members, assignments, offsets and lag of groups",
        description=(
            "Per partition: the group's committed offset (CURRENT-OFFSET), the log end offset, the LAG "
            "between them and the member it is assigned to. --members lists the members instead, "
            "--state the group's state."
        ),
        example="""
hmb groups describe --group billing
hmb groups describe --group billing --members --verbose
hmb groups describe --all-groups --json""",
    )
    _add_group_options(describe)
    view = describe.add_mutually_exclusive_group()
    view.add_argument(
        "--members", action="store_true", help="one line per member (id, host, client, partitions)"
    )
    view.add_argument(
        "--state", action="store_true", help="one line per group (coordinator, assignor, state)"
    )
    describe.add_argument(
        "--verbose", action="store_true", help="with --members: each member's assignment too"
    )
    add_json_option(describe)
    add_connection_options(describe, timeout_ms=TIMEOUT_MS)
    describe.set_defaults(func=run_describe)

    reset = add_parser(
        actions,
        "reset-offsets",
        help="plan or apply new committed offsets for a group",
        description=(
            "Compute new committed offsets for a group that has no active members and print them; "
            "nothing changes unless --execute is given (--dry-run, the default, only prints)."
        ),
        example="""
hmb groups reset-offsets --group billing --topic orders --to-earliest
hmb groups reset-offsets --group billing --all-topics --shift-by -10 --execute
hmb groups reset-offsets --group billing --topic orders:0,1 --to-datetime 2024-05-01T00:00:00 --execute""",
    )
    _add_group_options(reset)
    _add_topic_options(reset, all_topics=True)
    to = reset.add_mutually_exclusive_group(required=True)
    to.add_argument("--to-earliest", action="store_true", help="to each partition's earliest offset")
    to.add_argument("--to-latest", action="store_true", help="to each partition's log end offset")
    to.add_argument("--to-current", action="store_true", help="to the committed offset (no change)")
    to.add_argument("--to-offset", type=int, metavar="N", help="to offset N")
    to.add_argument(
        "--shift-by", type=int, metavar="N", help="move the committed offset by N (negative: back)"
    )
    to.add_argument(
        "--to-datetime",
        metavar="YYYY-MM-DDTHH:mm:SS.sss",
        help="to the first record at or after this time (local time unless it ends in Z or +HH:MM)",
    )
    mode = reset.add_mutually_exclusive_group()
    mode.add_argument("--dry-run", action="store_true", help="only print the new offsets (the default)")
    mode.add_argument("--execute", action="store_true", help="commit the new offsets")
    add_json_option(reset)
    add_connection_options(reset, timeout_ms=TIMEOUT_MS)
    reset.set_defaults(func=run_reset)

    delete = add_parser(
        actions,
        "delete",
        help="delete groups and their committed offsets",
        description="Delete groups that have no active members, with all their committed offsets.",
        example="""
hmb groups delete --group billing
hmb groups delete --group old-1 --group old-2 --json""",
    )
    _add_group_options(delete)
    add_json_option(delete)
    add_connection_options(delete, timeout_ms=TIMEOUT_MS)
    delete.set_defaults(func=run_delete)

    delete_offsets = add_parser(
        actions,
        "delete-offsets",
        help="delete a group's committed offsets of some topics",
        description=(
            "Forget the group's committed offsets of the given topics (or partitions); the group may be "
            "active, but not subscribed to those topics."
        ),
        example="""
hmb groups delete-offsets --group billing --topic orders
hmb groups delete-offsets --group billing --topic orders:0,2 --json""",
    )
    delete_offsets.add_argument("--group", required=True, metavar="GROUP", help="the group")
    _add_topic_options(delete_offsets, all_topics=False)
    add_json_option(delete_offsets)
    add_connection_options(delete_offsets, timeout_ms=TIMEOUT_MS)
    delete_offsets.set_defaults(func=run_delete_offsets)


def _add_group_options(parser: argparse.ArgumentParser) -> None:
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--group", action="append", metavar="GROUP", help="a group id (repeatable)")
    which.add_argument("--all-groups", action="store_true", help="every group")


def _add_topic_options(parser: argparse.ArgumentParser, *, all_topics: bool) -> None:
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument(
        "--topic",
        action="append",
        metavar="TOPIC[:P,P...]",
        help="a topic, or some of its partitions (repeatable)",
    )
    if all_topics:
        which.add_argument("--all-topics", action="store_true", help="every topic the group has offsets for")


def _group_ids(admin: Admin, ns: argparse.Namespace) -> list[str]:
    if ns.all_groups:
        return [g.group_id for g in admin.list_consumer_groups()]
    return list(dict.fromkeys(ns.group))


def _partitions(admin: Admin, specs: list[str]) -> list[TopicPartition]:
    """``["orders", "audit:0,2"]`` -> the partitions (every one of a topic named alone)."""
    from hmb_client.admin import UnknownTopicOrPartitionError
    from hmb_client.structs import TopicPartition

    out: list[TopicPartition] = []
    for spec in specs:
        topic, sep, listed = spec.partition(":")
        try:
            count = len(admin.describe_topic(topic).partitions)
        except UnknownTopicOrPartitionError:
            raise CliError(f"topic {topic!r} does not exist; see 'hmb topics list'") from None
        if not sep:
            out.extend(TopicPartition(topic, p) for p in range(count))
            continue
        for item in split_list(listed):
            if not item.isdigit() or int(item) >= count:
                raise CliError(f"topic {topic!r} has partitions 0-{count - 1}, not {item!r}", code=2)
            out.append(TopicPartition(topic, int(item)))
    return sorted(set(out))


# ---------------------------------------------------------------- list


def run_list(ns: argparse.Namespace) -> int:
    states = None if not ns.state else split_list(ns.state)
    with open_admin(ns) as admin:
        groups = admin.list_consumer_groups(states)
    if ns.json:
        print_json(
            [{"group": g.group_id, "protocol_type": g.protocol_type, "state": g.state} for g in groups]
        )
    elif ns.state is not None:
        print_table(("GROUP", "STATE"), ((g.group_id, g.state) for g in groups))
    else:
        for g in groups:
            print(g.group_id)
    return 0


# ---------------------------------------------------------------- describe


def _offset_rows(admin: Admin, desc: GroupDescription) -> list[dict[str, Any]]:
    """Kafka's describe rows: every partition committed or assigned, with its lag."""
    from hmb_client.admin_types import OffsetSpec

    committed = admin.list_consumer_group_offsets(desc.group_id)
    owner = {tp: m for m in desc.members for tp in m.assignment}
    partitions = sorted(set(committed) | set(owner))
    existing = admin.topic_names(include_internal=True)  # a deleted topic's offsets show without a log end
    alive = [tp for tp in partitions if tp.topic in existing]
    ends = admin.list_offsets(dict.fromkeys(alive, OffsetSpec.LATEST)) if alive else {}
    rows = []
    for tp in partitions:
        current = committed[tp].offset if tp in committed else None
        end = ends[tp].offset if tp in ends else None
        member = owner.get(tp)
        rows.append(
            {
                "group": desc.group_id,
                "topic": tp.topic,
                "partition": tp.partition,
                "current_offset": current,
                "log_end_offset": end,
                "lag": None if current is None or end is None else max(0, end - current),
                "consumer_id": member.member_id if member else None,
                "host": member.client_host if member else None,
                "client_id": member.client_id if member else None,
            }
        )
    for m in desc.members:  # a member with nothing assigned still shows, as Kafka's tool does
        if not m.assignment:
            rows.append(
                {
                    "group": desc.group_id,
                    "topic": None,
                    "partition": None,
                    "current_offset": None,
                    "log_end_offset": None,
                    "lag": None,
                    "consumer_id": m.member_id,
                    "host": m.client_host,
                    "client_id": m.client_id,
                }
            )
    return rows


def _group_json(desc: GroupDescription, rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "group": desc.group_id,
        "state": desc.state,
        "coordinator": desc.coordinator,
        "protocol_type": desc.protocol_type,
        "assignment_strategy": desc.protocol,
        "members": [
            {
                "consumer_id": m.member_id,
                "group_instance_id": m.group_instance_id,
                "host": m.client_host,
                "client_id": m.client_id,
                "topics": list(m.topics),
                "assignment": [{"topic": tp.topic, "partition": tp.partition} for tp in m.assignment],
            }
            for m in desc.members
        ],
        "offsets": rows,
    }


def run_describe(ns: argparse.Namespace) -> int:
    with open_admin(ns) as admin:
        ids = _group_ids(admin, ns)
        described = admin.describe_consumer_groups(ids) if ids else {}
        rows = {g: _offset_rows(admin, d) for g, d in described.items() if not ns.members and not ns.state}
    if ns.json:
        print_json([_group_json(d, rows.get(g, [])) for g, d in described.items()])
        return 0
    for i, desc in enumerate(described.values()):
        if i:
            print()
        _print_group(ns, desc, rows.get(desc.group_id, []))
    return 0


def _print_group(ns: argparse.Namespace, desc: GroupDescription, rows: list[dict[str, Any]]) -> None:
    gid = desc.group_id
    if desc.state == "Dead":
        print(f"Consumer group '{gid}' does not exist.")
        return
    if ns.state:
        print_table(
            ("GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS"),
            [(gid, f"({desc.coordinator})", desc.protocol or "", desc.state, len(desc.members))],
        )
        return
    if not desc.members:
        print(f"Consumer group '{gid}' has no active members.", file=sys.stderr)
    if ns.members:
        header: tuple[str, ...] = ("GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS")
        member_rows: list[tuple[object, ...]] = []
        for m in desc.members:
            row: tuple[object, ...] = (gid, m.member_id, m.client_host, m.client_id, len(m.assignment))
            if ns.verbose:
                row += (",".join(f"{tp.topic}:{tp.partition}" for tp in m.assignment) or "-",)
            member_rows.append(row)
        print_table(header + (("ASSIGNMENT",) if ns.verbose else ()), member_rows)
        return
    keys = (
        "group",
        "topic",
        "partition",
        "current_offset",
        "log_end_offset",
        "lag",
        "consumer_id",
        "host",
        "client_id",
    )
    header = (
        "GROUP",
        "TOPIC",
        "PARTITION",
        "CURRENT-OFFSET",
        "LOG-END-OFFSET",
        "LAG",
        "CONSUMER-ID",
        "HOST",
        "CLIENT-ID",
    )
    print_table(header, [tuple(r[k] for k in keys) for r in rows])


# ---------------------------------------------------------------- reset-offsets


def _parse_datetime(text: str) -> int:
    try:
        when = datetime.datetime.fromisoformat(text)
    except ValueError:
        raise CliError(
            f"--to-datetime expects YYYY-MM-DDTHH:mm:SS.sss (optionally ending Z or +HH:MM), not {text!r}",
            code=2,
        ) from None
    return int(when.timestamp() * 1000)  # a naive time is local time, as Kafka's tool reads it


def _new_offsets(admin: Admin, ns: argparse.Namespace, group: str) -> dict[TopicPartition, int]:
    from hmb_client.admin_types import OffsetSpec

    committed = admin.list_consumer_group_offsets(group)
    partitions = sorted(committed) if ns.all_topics else _partitions(admin, ns.topic)
    if not partitions:
        return {}
    earliest = admin.list_offsets(dict.fromkeys(partitions, OffsetSpec.EARLIEST))
    latest = admin.list_offsets(dict.fromkeys(partitions, OffsetSpec.LATEST))

    def clamp(tp: TopicPartition, offset: int) -> int:
        return min(max(offset, earliest[tp].offset), latest[tp].offset)

    def current(tp: TopicPartition) -> int:
        if tp not in committed:
            raise CliError(
                f"group {group!r} has no committed offset for {tp.topic}-{tp.partition} to start from; "
                "use --to-earliest, --to-latest, --to-offset or --to-datetime for it"
            )
        return committed[tp].offset

    if ns.to_earliest:
        return {tp: earliest[tp].offset for tp in partitions}
    if ns.to_latest:
        return {tp: latest[tp].offset for tp in partitions}
    if ns.to_current:
        return {tp: current(tp) for tp in partitions}
    if ns.to_offset is not None:
        return {tp: clamp(tp, ns.to_offset) for tp in partitions}
    if ns.shift_by is not None:
        return {tp: clamp(tp, current(tp) + ns.shift_by) for tp in partitions}
    found = admin.list_offsets(dict.fromkeys(partitions, _parse_datetime(ns.to_datetime)))
    return {tp: found[tp].offset if found[tp].offset >= 0 else latest[tp].offset for tp in partitions}


def run_reset(ns: argparse.Namespace) -> int:
    if ns.to_datetime is not None:
        _parse_datetime(ns.to_datetime)  # a typo fails before any request
    planned: dict[str, dict[TopicPartition, int]] = {}
    with open_admin(ns) as admin:
        ids = _group_ids(admin, ns)
        for gid, desc in admin.describe_consumer_groups(ids).items():
            if desc.state not in INACTIVE:
                raise CliError(
                    f"assignments can only be reset if group {gid!r} is inactive, but its state is "
                    f"{desc.state}; stop its consumers first"
                )
            planned[gid] = _new_offsets(admin, ns, gid)
        if ns.execute:
            for gid, offsets in planned.items():
                if offsets:
                    admin.alter_consumer_group_offsets(gid, dict(offsets))
    if ns.json:
        print_json(
            {
                "executed": bool(ns.execute),
                "offsets": [
                    {"group": g, "topic": tp.topic, "partition": tp.partition, "new_offset": o}
                    for g, offsets in planned.items()
                    for tp, o in offsets.items()
                ],
            }
        )
    else:
        rows = [(g, tp.topic, tp.partition, o) for g, offsets in planned.items() for tp, o in offsets.items()]
        print_table(("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"), rows)
    if not ns.execute:
        print("Dry run: nothing was changed; add --execute to commit these offsets.", file=sys.stderr)
    return 0


# ---------------------------------------------------------------- delete, delete-offsets


def run_delete(ns: argparse.Namespace) -> int:
    with open_admin(ns) as admin:
        ids = _group_ids(admin, ns)
        if ids:
            admin.delete_consumer_groups(ids)
    if ns.json:
        print_json({"deleted": ids})
    else:
        names = ", ".join(f"'{g}'" for g in ids)
        print(f"Deletion of requested consumer groups ({names}) was successful.")
    return 0


def run_delete_offsets(ns: argparse.Namespace) -> int:
    with open_admin(ns) as admin:
        partitions = _partitions(admin, ns.topic)
        admin.delete_consumer_group_offsets(ns.group, partitions)
    if ns.json:
        print_json(
            {
                "group": ns.group,
                "deleted": [{"topic": tp.topic, "partition": tp.partition} for tp in partitions],
            }
        )
    else:
        print_table(
            ("TOPIC", "PARTITION", "STATUS"), [(tp.topic, tp.partition, "Successful") for tp in partitions]
        )
    return 0
