"""``hmb produce`` and ``hmb consume``: lines in, records out (like Kafka's console tools).

Bytes pass through unchanged: ``produce`` reads lines as bytes and sends
each without its ``\\n``; ``consume`` writes keys and values as the raw bytes
stored (text formats) or as JSON strings (``--format json``: UTF-8 decoded
with U+FFFD for invalid bytes, or base64 with ``--binary``).  So a line
produced is consumed back byte for byte, as long as it holds no newline.
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
import time
from typing import IO, TYPE_CHECKING, Any

from hmb_client.tools.common import (
    AckTracker,
    CliError,
    add_connection_options,
    add_producer_options,
    client_security,
    ensure_topic,
    non_negative_int,
    open_admin,
    parse_properties,
    positive_int,
    producer_settings,
    true_property,
    unescape,
)

if TYPE_CHECKING:
    from hmb_client.structs import ConsumerRecord

TIMEOUT_MS = 5_000
COMMIT_INTERVAL_S = 5.0

PRODUCE_PROPERTIES = {
    "parse.key": "true: each line is KEY<key.separator>VALUE (default false: the line is the value)",
    "key.separator": "what separates key from value (default: a tab; escapes like \\t allowed)",
    "null.marker": "a key or value equal to this text is sent as null (default: none)",
}
CONSUME_PROPERTIES = {
    "print.key": "true: print the key before the value (as --format key-value does)",
    "print.value": "false: leave the value out (default true)",
    "print.offset": "true: print Offset:N first",
    "print.partition": "true: print Partition:N first",
    "print.timestamp": "true: print CreateTime:MS (or NO_TIMESTAMP) first",
    "key.separator": "separator between the printed fields (default: a tab)",
    "line.separator": "written after each record (default: a newline)",
    "null.literal": "printed for a null key or value (default: null)",
}


def _property_help(known: dict[str, str]) -> str:
    return "; ".join(f"{k}: {v}" for k, v in known.items())


def register(sub: Any) -> None:
    produce = sub.add_parser(
        "produce",
        help="send lines from stdin or a file as records",
        description=(
            "Send each line of standard input (or --file) to TOPIC as one record, the line's bytes "
            "without its newline (like kafka-console-producer.sh). Empty lines become empty records. "
            "The topic is created if the broker auto-creates topics. Progress goes to stderr when it "
            "is a terminal, a summary at the end; the exit status is 1 if any record failed."
        ),
    )
    produce.add_argument("topic", metavar="TOPIC", help="topic to send to")
    produce.add_argument("--file", metavar="FILE", help="read lines from FILE instead of standard input")
    produce.add_argument(
        "--property",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help="line parsing, repeatable. " + _property_help(PRODUCE_PROPERTIES),
    )
    add_producer_options(produce, acks=1)
    add_connection_options(produce, timeout_ms=TIMEOUT_MS)
    produce.set_defaults(func=run_produce)

    consume = sub.add_parser(
        "consume",
        help="print records of a topic",
        description=(
            "Print the records of TOPIC, one a line (like kafka-console-consumer.sh). Where to start: "
            "--from-beginning, --offset, or (with --group and neither) the group's committed offsets; "
            "otherwise only new records. An explicit start overrides committed offsets. With --group, "
            "the position is committed every few seconds and on exit. Stops after --max-messages, "
            "after --timeout-ms without records, or on Ctrl-C."
        ),
    )
    consume.add_argument("topic", metavar="TOPIC", help="topic to read")
    start = consume.add_mutually_exclusive_group()
    start.add_argument("--from-beginning", action="store_true", help="start at the earliest offset")
    start.add_argument(
        "--offset",
        metavar="N|earliest|latest",
        help="start at this offset (in every partition read, unless --partition narrows it)",
    )
    consume.add_argument(
        "--partition", type=non_negative_int, metavar="P", help="read only partition P (default: all)"
    )
    consume.add_argument(
        "--group",
        metavar="G",
        help="consumer group whose committed offsets to start from and to commit to (assigned "
        "partitions; no group membership, the broker speaks Kafka 0.8)",
    )
    consume.add_argument("--max-messages", type=positive_int, metavar="N", help="exit after N records")
    consume.add_argument(
        "--timeout-ms", type=positive_int, metavar="MS", help="exit when no record arrived for MS"
    )
    consume.add_argument(
        "--format",
        choices=("value", "key-value", "json"),
        default="value",
        help="value: the value's bytes; key-value: key, key.separator, value; json: one object a line "
        "with topic, partition, offset, timestamp, key, value (default value)",
    )
    consume.add_argument(
        "--binary",
        action="store_true",
        help="with --format json, give key and value as base64 "
        "(default: UTF-8 text, invalid bytes as U+FFFD)",
    )
    consume.add_argument(
        "--property",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help="output formatting, repeatable. " + _property_help(CONSUME_PROPERTIES),
    )
    add_connection_options(consume, timeout_ms=TIMEOUT_MS)
    consume.set_defaults(func=run_consume)


# ------------------------------------------------------------------ produce


def run_produce(ns: argparse.Namespace) -> int:
    from hmb_client.producer import Producer
    from hmb_client.progress import Progress

    props = parse_properties(ns.property, PRODUCE_PROPERTIES, "produce")
    parse_key = true_property(props, "parse.key")
    separator = unescape(props.get("key.separator", "\t")).encode()
    if parse_key and not separator:
        raise CliError("key.separator must not be empty", code=2)
    null_marker = props["null.marker"].encode() if "null.marker" in props else None
    source: IO[bytes] = open(ns.file, "rb") if ns.file else sys.stdin.buffer
    try:
        with open_admin(ns) as admin:
            ensure_topic(admin, ns.topic, ns.request_timeout_ms / 1000)
        producer = Producer(
            ns.bootstrap_server,
            client_id="hmb-console-producer",
            request_timeout_ms=ns.request_timeout_ms,
            **producer_settings(ns),
            **client_security(ns),
        )
        tracker = AckTracker()
        progress = Progress(unit="lines sent")
        started = time.monotonic()
        sent = 0
        try:
            for lineno, line in enumerate(source, 1):
                value: bytes | None = line[:-1] if line.endswith(b"\n") else line
                key: bytes | None = None
                if parse_key:
                    assert value is not None
                    key, sep, value = value.partition(separator)
                    if not sep:
                        raise CliError(
                            f"line {lineno} has no key separator {separator.decode()!r} (parse.key=true); "
                            f"{sent} line(s) sent before it"
                        )
                    if key == null_marker:
                        key = None
                if value == null_marker:
                    value = None
                tracker.add(producer.send(ns.topic, value, key=key))
                sent += 1
                if sent & 255 == 0:
                    tracker.drain()
                    progress.update(sent, _rate_text(tracker.acked, started))
            producer.flush()
        finally:
            progress.close()
            producer.close()
    finally:
        if ns.file:
            source.close()
    tracker.drain()
    elapsed = time.monotonic() - started
    print(
        f"{tracker.acked} record(s) sent to {ns.topic} in {elapsed:.2f} s "
        f"({tracker.acked / max(elapsed, 1e-9):,.0f} records/s)"
        + (f", {tracker.failed} failed" if tracker.failed else ""),
        file=sys.stderr,
    )
    if tracker.failed:
        raise CliError(f"{tracker.failed} of {sent} record(s) failed; first error: {tracker.first_error}")
    return 0


def _rate_text(done: int, started: float) -> str:
    elapsed = time.monotonic() - started
    return f"{done / max(elapsed, 1e-9):,.0f} records/s acknowledged"


# ------------------------------------------------------------------ consume


class RecordFormatter:
    """Turns records into the bytes ``hmb consume`` writes."""

    def __init__(self, fmt: str, props: dict[str, str], binary: bool) -> None:
        self.json = fmt == "json"
        self.binary = binary
        self.print_key = fmt == "key-value" or true_property(props, "print.key")
        self.print_value = true_property(props, "print.value", default=True)
        self.print_offset = true_property(props, "print.offset")
        self.print_partition = true_property(props, "print.partition")
        self.print_timestamp = true_property(props, "print.timestamp")
        self.separator = unescape(props.get("key.separator", "\t")).encode()
        self.line_separator = unescape(props.get("line.separator", "\n")).encode()
        self.null = props.get("null.literal", "null").encode()

    def __call__(self, r: ConsumerRecord) -> bytes:
        if self.json:
            return (
                json.dumps(
                    {
                        "topic": r.topic,
                        "partition": r.partition,
                        "offset": r.offset,
                        "timestamp": r.timestamp,
                        "key": self._text(r.key),
                        "value": self._text(r.value),
                    },
                    ensure_ascii=False,
                ).encode()
                + b"\n"
            )
        fields: list[bytes] = []
        if self.print_timestamp:
            fields.append(
                b"NO_TIMESTAMP" if r.timestamp is None or r.timestamp < 0 else b"CreateTime:%d" % r.timestamp
            )
        if self.print_partition:
            fields.append(b"Partition:%d" % r.partition)
        if self.print_offset:
            fields.append(b"Offset:%d" % r.offset)
        if self.print_key:
            fields.append(self.null if r.key is None else r.key)
        if self.print_value:
            fields.append(self.null if r.value is None else r.value)
        return self.separator.join(fields) + self.line_separator

    def _text(self, data: bytes | None) -> str | None:
        if data is None:
            return None
        if self.binary:
            return base64.b64encode(data).decode("ascii")
        return data.decode("utf-8", errors="replace")


def run_consume(ns: argparse.Namespace) -> int:
    from hmb_client.consumer import Consumer
    from hmb_client.structs import TopicPartition

    props = parse_properties(ns.property, CONSUME_PROPERTIES, "consume")
    formatter = RecordFormatter(ns.format, props, ns.binary)
    if ns.binary and ns.format != "json":
        raise CliError("--binary applies to --format json only", code=2)
    start_offset: int | None = None
    if ns.offset is not None and ns.offset not in ("earliest", "latest"):
        try:
            start_offset = int(ns.offset)
        except ValueError:
            start_offset = -1
        if start_offset < 0:
            raise CliError(f"--offset must be a number >= 0, earliest or latest, not {ns.offset!r}", code=2)
    with open_admin(ns) as admin:
        ensure_topic(admin, ns.topic, ns.request_timeout_ms / 1000)
    consumer = Consumer(
        bootstrap_servers=ns.bootstrap_server,
        group_id=ns.group,
        client_id="hmb-console-consumer",
        auto_offset_reset="latest",
        enable_auto_commit=False,
        **client_security(ns),
    )
    out = sys.stdout.buffer
    count = 0
    try:
        partitions = sorted(consumer.partitions_for_topic(ns.topic) or ())
        if ns.partition is not None:
            if ns.partition not in partitions:
                raise CliError(
                    f"topic {ns.topic!r} has no partition {ns.partition} (it has {len(partitions)})"
                )
            partitions = [ns.partition]
        if not partitions:
            raise CliError(f"topic {ns.topic!r} has no partitions")
        tps = [TopicPartition(ns.topic, p) for p in partitions]
        consumer.assign(tps)
        _position(consumer, tps, ns, start_offset)
        remaining = ns.max_messages
        last_record = last_commit = time.monotonic()
        try:
            while remaining is None or remaining > 0:
                poll_s = 1.0
                if ns.timeout_ms is not None:
                    poll_s = min(poll_s, max(0.0, last_record + ns.timeout_ms / 1000 - time.monotonic()))
                records = consumer.poll(timeout=poll_s, max_records=remaining)
                now = time.monotonic()
                if records:
                    out.write(b"".join(formatter(r) for r in records))
                    out.flush()
                    count += len(records)
                    if remaining is not None:
                        remaining -= len(records)
                    last_record = now
                elif ns.timeout_ms is not None and now - last_record >= ns.timeout_ms / 1000:
                    break
                if ns.group and now - last_commit >= COMMIT_INTERVAL_S:
                    consumer.commit()
                    last_commit = now
        except KeyboardInterrupt:
            pass
        if ns.group:
            consumer.commit()
    finally:
        consumer.close()
    print(f"Processed a total of {count} messages", file=sys.stderr)
    return 0


def _position(consumer: Any, tps: list[Any], ns: argparse.Namespace, start_offset: int | None) -> None:
    """Seek every partition to where ``ns`` says reading starts."""
    if ns.from_beginning or ns.offset == "earliest":
        consumer.seek_to_beginning(*tps)
    elif ns.offset == "latest":
        consumer.seek_to_end(*tps)
    elif start_offset is not None:
        for tp in tps:
            consumer.seek(tp, start_offset)
    elif not ns.group:
        consumer.seek_to_end(*tps)
    # With a group and no explicit start, a freshly assigned partition starts at the group's
    # committed offset, or at the latest one (auto_offset_reset) when nothing is committed.
