"""The ``hmb`` command: the broker and the client tools under one name.

    hmb serve ...                      the broker (options of :mod:`hmb.cli`)
    hmb topics|produce|consume|perf    the client tools (:mod:`hmb_client.cli`)

Rule of this package: it is the only code that knows both :mod:`hmb` and
:mod:`hmb_client`, so that neither of them imports the other.  It only
dispatches: ``serve`` and everything after it go to the broker's own parser
(imported only then, so ``hmb --help`` stays instant); every other command
goes to the client's.  ``hmb --help`` lists ``serve`` beside the tools.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from hmb_client import cli as client_cli


def _register_serve(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    serve = sub.add_parser(
        "serve",
        help="run the broker (hmb serve --help for its options)",
        add_help=False,  # the broker's own parser answers --help
    )
    serve.add_argument("args", nargs=argparse.REMAINDER, help="the broker's options")


def build_parser() -> argparse.ArgumentParser:
    """The whole ``hmb`` parser: ``serve`` first, then the client tools."""
    return client_cli.build_parser(first=_register_serve)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["serve"]:  # everything after "serve", --help included, is the broker's
        from hmb import gc_policy

        gc_policy.pause()  # this process is the broker's: no collection while it starts
        from hmb import cli as server_cli

        return int(server_cli.main(args[1:]))
    return client_cli.main(args, parser=build_parser())
