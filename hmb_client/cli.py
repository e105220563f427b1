"""The ``hmb`` command: one entry point for the broker and the client tools.

Subcommands are added as their features land; each has ``--help``.  The
broker lives in :mod:`hmb`, imported only when ``hmb serve`` runs, so the
client tools start fast and :mod:`hmb` never depends on this package.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hmb",
        description=(
            "HMB-py: a Python message broker that speaks the Apache Kafka wire protocol, "
            "and the tools to use it."
        ),
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    serve = sub.add_parser(
        "serve",
        help="run the broker (hmb serve --help for its options)",
        add_help=False,  # the broker's own parser answers --help
    )
    serve.add_argument("args", nargs=argparse.REMAINDER)
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
    parser.error(f"unknown command {ns.command}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
