"""What every ``hmb`` client tool shares: connection options, ``--property``
and ``k=v,k2=v2`` parsing, ``--json`` output, help with an example, the error
type the dispatcher turns into a one-line message, and :class:`AckTracker`,
which counts acknowledged and failed sends.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import deque
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hmb_client.admin import Admin
    from hmb_client.producer import FutureRecordMetadata

DEFAULT_BOOTSTRAP = "127.0.0.1:9092"


class CliError(Exception):
    """A failure to report as one line on stderr (no traceback), with an exit code."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


def _int_at_least(minimum: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected a number of at least {minimum}, got {value}")
        return value

    return parse


positive_int = _int_at_least(1)
non_negative_int = _int_at_least(0)


def acks_value(text: str) -> int | str:
    if text in ("all", "rack"):
        return text
    if text in ("0", "1", "-1"):
        return int(text)
    raise argparse.ArgumentTypeError("acks must be 0, 1, -1, all or rack")


COMPRESSION_TYPES = ("none", "gzip", "snappy", "lz4", "zstd")


def add_connection_options(parser: argparse.ArgumentParser, *, timeout_ms: int) -> None:
    """``--bootstrap-server`` and ``--request-timeout-ms``, worded the same everywhere."""
    group = parser.add_argument_group("connection")
    group.add_argument(
        "--bootstrap-server",
        metavar="HOST:PORT",
        default=DEFAULT_BOOTSTRAP,
        help=(
            f"the broker to connect to; a comma-separated list is tried in turn (default {DEFAULT_BOOTSTRAP})"
        ),
    )
    group.add_argument(
        "--request-timeout-ms",
        metavar="MS",
        type=positive_int,
        default=timeout_ms,
        help=(
            "how long to wait for each broker answer, and for a broker to be reachable at all "
            f"before giving up (default {timeout_ms})"
        ),
    )
    group.add_argument(
        "--command-config",
        metavar="FILE",
        type=Path,
        help=(
            "a Kafka client properties file with the connection's security settings "
            "(security.protocol, ssl.*, sasl.mechanism, sasl.jaas.config), as Kafka's tools take it"
        ),
    )


def client_security(ns: argparse.Namespace) -> dict[str, Any]:
    """The TLS/SASL keyword arguments of the clients, from ``--command-config``."""
    from hmb_client.tools.command_config import security_settings

    return security_settings(getattr(ns, "command_config", None))


def add_producer_options(parser: argparse.ArgumentParser, *, acks: int) -> None:
    """The producer settings both ``hmb produce`` and ``hmb perf produce`` take."""
    group = parser.add_argument_group("producer")
    group.add_argument(
        "--acks",
        "--request-required-acks",
        type=acks_value,
        default=acks,
        metavar="{0,1,-1,all,rack}",
        help=(
            "acknowledgement the broker gives each request: 0 = none (fire and forget), 1 = the "
            "leader has written it, -1/all = all in-sync replicas have, rack = none, but a monitor "
            f"in this process resends what the broker's receipts do not confirm (default {acks})"
        ),
    )
    group.add_argument(
        "--compression-type",
        "--compression-codec",
        choices=COMPRESSION_TYPES,
        default="none",
        help="compress each batch with this codec (default none)",
    )
    group.add_argument(
        "--batch-size",
        type=positive_int,
        default=16_384,
        metavar="BYTES",
        help="collect up to this many bytes per partition into one batch before sending (default 16384)",
    )
    group.add_argument(
        "--linger-ms",
        type=non_negative_int,
        default=5,
        metavar="MS",
        help="wait up to this long for a batch to fill before sending it anyway (default 5)",
    )


def producer_settings(ns: argparse.Namespace) -> dict[str, object]:
    """Producer keyword arguments from the options :func:`add_producer_options` added."""
    return {
        "acks": ns.acks,
        "compression_type": None if ns.compression_type == "none" else ns.compression_type,
        "batch_size": ns.batch_size,
        "linger_ms": ns.linger_ms,
    }


def add_parser(
    actions: Any, name: str, *, help: str, description: str, example: str
) -> argparse.ArgumentParser:
    """A subcommand whose ``--help`` ends with a worked example (``example``: one command a line)."""
    return actions.add_parser(
        name,
        help=help,
        description=description,
        epilog="example:\n" + "\n".join("  " + line for line in example.strip().splitlines()),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def add_json_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json", action="store_true", help="print the result as one JSON document instead of a table"
    )


def print_json(value: object) -> None:
    json.dump(value, sys.stdout, indent=2, sort_keys=False)
    sys.stdout.write("\n")


def print_table(header: tuple[str, ...], rows: Iterable[tuple[object, ...]]) -> None:
    """Columns aligned on their widest cell, as Kafka's tools print them."""
    cells = [header, *(tuple("-" if c is None else str(c) for c in r) for r in rows)]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    for r in cells:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())


def split_list(text: str) -> list[str]:
    """``"a=1,b=[x,y],c"`` -> ``["a=1", "b=[x,y]", "c"]``: commas inside [...] belong to a value."""
    items: list[str] = []
    depth, start = 0, 0
    for i, ch in enumerate(text):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth = max(0, depth - 1)
        elif ch == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    items.append(text[start:])
    return [item.strip() for item in items if item.strip()]


def parse_config_pairs(texts: Iterable[str], option: str) -> dict[str, str]:
    """``--add-config k=v,k2=[a,b]`` (repeatable) -> ``{"k": "v", "k2": "a,b"}``, as kafka-configs.sh."""
    out: dict[str, str] = {}
    for text in texts:
        for item in split_list(text):
            key, sep, value = item.partition("=")
            if not sep or not key.strip():
                raise CliError(f"{option} expects NAME=VALUE[,NAME=VALUE...], got {item!r}", code=2)
            value = value.strip()
            if value.startswith("[") and value.endswith("]"):
                value = value[1:-1]
            out[key.strip()] = value
    return out


def parse_properties(items: Iterable[str], known: dict[str, str], what: str) -> dict[str, str]:
    """``["parse.key=true", ...]`` -> dict, refusing names not in ``known`` (name -> help)."""
    props: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise CliError(f"--property expects KEY=VALUE, got {item!r}", code=2)
        if key not in known:
            raise CliError(f"unknown {what} property {key!r}; known: {', '.join(sorted(known))}", code=2)
        props[key] = value
    return props


def true_property(props: dict[str, str], name: str, default: bool = False) -> bool:
    value = props.get(name)
    if value is None:
        return default
    if value.strip().lower() in ("true", "1", "yes"):
        return True
    if value.strip().lower() in ("false", "0", "no"):
        return False
    raise CliError(f"property {name} must be true or false, not {value!r}", code=2)


def unescape(text: str) -> str:
    """Property values may spell separators with backslash escapes: ``key.separator=\\t``."""
    return text.encode("latin-1", "backslashreplace").decode("unicode_escape")


def open_admin(ns: argparse.Namespace) -> Admin:
    """An admin client that has already reached the broker (raises NoBrokersAvailable otherwise)."""
    from hmb_client.admin import Admin

    admin = Admin(
        ns.bootstrap_server,
        client_id="hmb-cli",
        request_timeout_ms=ns.request_timeout_ms,
        **client_security(ns),
    )
    try:
        admin.topic_names()
    except BaseException:
        admin.close()
        raise
    return admin


def ensure_topic(admin: Admin, topic: str, timeout_s: float) -> None:
    """Make sure ``topic`` exists, creating it (broker defaults) the way Kafka 0.8 clients do."""
    from hmb_client.admin import TopicAlreadyExistsError

    if topic in admin.topic_names(include_internal=topic.startswith("__")):
        return
    try:
        admin.create_topic(topic, timeout_s=timeout_s)
    except TopicAlreadyExistsError:
        pass


class AckTracker:
    """Counts acknowledged and failed records without a callback per record.

    Futures are kept in send order and :meth:`drain` pops the finished ones
    from the front (``done()`` is a flag test), so the counts lag the
    broker by at most the records in flight, and are exact after a flush.
    A callback per record would cost the producer's I/O thread several
    microseconds each, more than the sending itself.  Consecutive records
    of one producer batch share one entry (they are acknowledged or fail
    together), so a 16 KiB batch of 100-byte records is one check, not 140.
    """

    def __init__(self) -> None:
        #: [future of the run's first record, records in the run]
        self._pending: deque[list[Any]] = deque()
        self._in_flight = 0
        self.acked = 0
        self.failed = 0
        self.first_error: BaseException | None = None

    def add(self, future: FutureRecordMetadata) -> None:
        self._in_flight += 1
        pending = self._pending
        if pending:
            last = pending[-1]
            batch = future._batch  # one package: a batch's records share their outcome
            if batch is not None and last[0]._batch is batch:
                last[1] += 1
                return
        pending.append([future, 1])

    @property
    def in_flight(self) -> int:
        return self._in_flight

    def wait(self, timeout: float) -> None:
        """Wait up to ``timeout`` seconds for the oldest record in flight to finish, then drain."""
        from hmb_client.errors import KafkaTimeoutError

        if self._pending:
            try:
                self._pending[0][0].exception(timeout)
            except KafkaTimeoutError:
                pass
        self.drain()

    def drain(self) -> None:
        pending = self._pending
        while pending and pending[0][0].done():
            future, count = pending.popleft()
            self._in_flight -= count
            error = future.exception(0)
            if error is None:
                self.acked += count
            else:
                self.failed += count
                if self.first_error is None:
                    self.first_error = error
