"""The ``hmb`` command: one entry point for the broker and the client tools.

    hmb serve ...                      the broker (options of :mod:`hmb.cli`)
    hmb topics create|list|describe    topic administration
    hmb produce TOPIC                  lines from stdin or a file -> records
    hmb consume TOPIC                  records -> lines on stdout
    hmb perf produce|consume           throughput and latency measurements

Every subcommand has ``--help``.  The broker lives in :mod:`hmb`, imported
only when ``hmb serve`` runs, and the tools import the client library only
when they run, so ``--help`` is instant and :mod:`hmb` never depends on this
package.  This module only dispatches; the tools live in
:mod:`hmb_client.tools`.  Failures the user can act on (no broker at the
address, unknown topic, a failed send) end as one line on stderr and exit
status 1, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from hmb_client.tools import console, perf, topics
from hmb_client.tools.common import CliError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hmb",
        description=(
            "HMB-py: a Python message broker that speaks the Apache Kafka wire protocol, "
            "and the tools to use it."
        ),
        epilog="Run 'hmb COMMAND --help' for a command's options.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", help="one of:")
    serve = sub.add_parser(
        "serve",
        help="run the broker (hmb serve --help for its options)",
        add_help=False,  # the broker's own parser answers --help
    )
    serve.add_argument("args", nargs=argparse.REMAINDER)
    topics.register(sub)
    console.register(sub)
    perf.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["serve"]:  # everything after "serve", --help included, is the broker's
        server_cli = importlib.import_module("hmb.cli")
        return int(server_cli.main(args[1:]))
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
    from hmb_client.errors import KafkaError, NoBrokersAvailable

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
