"""The client tools of the ``hmb`` command.

    hmb topics create|alter|list|describe              topic administration
    hmb configs describe|alter                         topic and broker settings
    hmb groups list|describe|reset-offsets|delete|...  consumer groups, their offsets and lag
    hmb records delete                                 delete records below an offset
    hmb produce TOPIC                  lines from stdin or a file -> records
    hmb consume TOPIC                  records -> lines on stdout
    hmb perf produce|consume           throughput and latency measurements
    hmb users add|delete|list          SCRAM credentials
    hmb acls add|list|remove           ACLs (kafka-acls.sh's flags)
    hmb rack-monitor                   a rAck monitor for producers in other processes

Every subcommand has ``--help``.  The ``hmb`` console script is
:func:`hmb_cmd.main`, which adds ``hmb serve`` (the broker) in front of
these, so that this package never imports the broker (nor the broker this
package).  The tools import the client library only when they run, so
``--help`` is instant.  This module only dispatches; the tools live in
:mod:`hmb_client.tools`.  Failures the user can act on (no broker at the
address, unknown topic, a failed send) end as one line on stderr and exit
status 1, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence

from hmb_client.tools import configs, console, groups, perf, rack, records, security, topics
from hmb_client.tools.common import CliError

#: Registers commands of another package (``hmb serve``) ahead of the tools.
RegisterCommands = Callable[["argparse._SubParsersAction[argparse.ArgumentParser]"], None]


def build_parser(first: RegisterCommands | None = None) -> argparse.ArgumentParser:
    """The ``hmb`` parser; ``first`` adds subcommands listed before the tools."""
    parser = argparse.ArgumentParser(
        prog="hmb",
        description=(
            "HMB-py: a Python message broker that speaks the Apache Kafka wire protocol, "
            "and the tools to use it."
        ),
        epilog="Run 'hmb COMMAND --help' for a command's options.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", help="one of:")
    if first is not None:
        first(sub)
    topics.register(sub)
    configs.register(sub)
    groups.register(sub)
    records.register(sub)
    console.register(sub)
    perf.register(sub)
    security.register(sub)
    rack.register(sub)
    return parser


def main(argv: Sequence[str] | None = None, parser: argparse.ArgumentParser | None = None) -> int:
    """Run one tool command; ``parser`` (default :func:`build_parser`) may carry more commands."""
    args = list(sys.argv[1:] if argv is None else argv)
    if parser is None:
        parser = build_parser()
    ns = parser.parse_args(args)
    if ns.command is None:
        parser.print_help()
        return 2
    func = getattr(ns, "func", None)
    if func is None:  # pragma: no cover - every subcommand sets func
        parser.error(f"unknown command {ns.command}")
    return _run(func, ns)


def _run(func: object, ns: argparse.Namespace) -> int:
    from hmb_client.errors import KafkaError, NoBrokersAvailable, UnsupportedVersionError

    prog = "hmb " + ns.command + (f" {ns.action}" if getattr(ns, "action", None) else "")
    try:
        return int(func(ns) or 0)  # type: ignore[operator]
    except NoBrokersAvailable:
        print(
            f"{prog}: cannot reach a broker at {ns.bootstrap_server} within {ns.request_timeout_ms} ms; "
            "start one with 'hmb serve' or name yours with --bootstrap-server HOST:PORT",
            file=sys.stderr,
        )
        return 1
    except CliError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return exc.code
    except UnsupportedVersionError as exc:
        print(f"{prog}: {exc}; this broker does not offer what the command needs", file=sys.stderr)
        return 1
    except KafkaError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 1
    except (OSError, ValueError) as exc:
        if isinstance(exc, BrokenPipeError):  # e.g. "hmb consume T | head": stop quietly
            _silence_stdout()
            return 0
        print(f"{prog}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(file=sys.stderr)
        return 130


def _silence_stdout() -> None:
    """After a broken pipe, point stdout at /dev/null so the exit-time flush is quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    sys.exit(main())
