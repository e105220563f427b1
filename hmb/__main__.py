"""``python -m hmb serve [options]``: the same as ``hmb serve``."""

from __future__ import annotations

import sys

from hmb import gc_policy

USAGE = "usage: python -m hmb serve [options]   (python -m hmb serve --help for the options)"

if __name__ == "__main__":
    args = sys.argv[1:]
    if not args or args[0] != "serve":
        print(USAGE, file=sys.stderr)
        sys.exit(2)
    gc_policy.pause()  # this process is the broker's: no collection while it starts
    from hmb.cli import main

    sys.exit(main(args[1:], prog="python -m hmb serve"))
