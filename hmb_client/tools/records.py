"""``hmb records delete``: delete the records below an offset, like kafka-delete-records.sh.

Rule of this module: the input is kafka-delete-records.sh's JSON file, so
files written for Kafka work unchanged::

    {"partitions": [{"topic": "orders", "partition": 0, "offset": 100}], "version": 1}

An offset of -1 deletes every record up to the high watermark.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hmb_client.tools.common import (
    CliError,
    add_connection_options,
    add_json_option,
    add_parser,
    open_admin,
    print_json,
)

if TYPE_CHECKING:
    from hmb_client.structs import TopicPartition

TIMEOUT_MS = 30_000


def register(sub: Any) -> None:
    records = sub.add_parser(
        "records",
        help="delete records at the head of partitions",
        description="Records of partitions (like Kafka's kafka-delete-records.sh).",
    )
    actions = records.add_subparsers(dest="action", metavar="ACTION", required=True, help="one of:")
    delete = add_parser(
        actions,
        "delete",
        help="delete every record below an offset",
        description=(
            "Move each listed partition's log start offset up to the given offset, deleting the records "
            "before it (-1: all records up to the high watermark). The file is kafka-delete-records.sh's: "
            '{"partitions": [{"topic": "orders", "partition": 0, "offset": 100}], "version": 1}'
        ),
        example="""
echo '{"partitions": [{"topic": "orders", "partition": 0, "offset": 100}], "version": 1}' > delete.json
hmb records delete --offset-json-file delete.json""",
    )
    delete.add_argument(
        "--offset-json-file", required=True, metavar="FILE", help="the partitions and offsets, as JSON"
    )
    add_json_option(delete)
    add_connection_options(delete, timeout_ms=TIMEOUT_MS)
    delete.set_defaults(func=run_delete)


def read_offset_file(path: str) -> dict[TopicPartition, int]:
    """The partitions and offsets of a kafka-delete-records.sh JSON file."""
    from hmb_client.structs import TopicPartition

    try:
        document = json.loads(Path(path).read_text())
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror}", code=2) from None
    except ValueError as exc:
        raise CliError(f"{path} is not JSON: {exc}", code=2) from None
    items = document.get("partitions") if isinstance(document, dict) else None
    if not isinstance(items, list) or not items:
        raise CliError(
            f'{path} needs {{"partitions": [{{"topic": T, "partition": P, "offset": O}}, ...]}}', code=2
        )
    out: dict[TopicPartition, int] = {}
    for item in items:
        try:
            tp = TopicPartition(str(item["topic"]), int(item["partition"]))
            offset = int(item["offset"])
        except (KeyError, TypeError, ValueError):
            raise CliError(
                f"{path}: each partition needs topic, partition and offset, got {item!r}", code=2
            ) from None
        if tp in out:
            raise CliError(f"{path}: {tp.topic}-{tp.partition} is listed twice", code=2)
        out[tp] = offset
    return out


def run_delete(ns: argparse.Namespace) -> int:
    offsets = read_offset_file(ns.offset_json_file)
    with open_admin(ns) as admin:
        missing = sorted({tp.topic for tp in offsets} - admin.topic_names(include_internal=True))
        if missing:
            raise CliError(f"topic {missing[0]!r} does not exist; see 'hmb topics list'")
        low = admin.delete_records(offsets, timeout_s=ns.request_timeout_ms / 1000)
    if ns.json:
        print_json(
            [{"topic": tp.topic, "partition": tp.partition, "low_watermark": w} for tp, w in low.items()]
        )
        return 0
    print("Records delete operation completed:")
    for tp, w in low.items():
        print(f"partition: {tp.topic}-{tp.partition}\tlow_watermark: {w}")
    return 0
