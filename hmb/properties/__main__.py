"""``python -m hmb.properties``: print the settings table, or regenerate the README's copy."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hmb.properties.render import help_text, markdown, write_readme


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m hmb.properties", description=__doc__)
    what = p.add_mutually_exclusive_group()
    what.add_argument("--markdown", action="store_true", help="print the README's settings tables")
    what.add_argument("--readme", metavar="FILE", type=Path, help="rewrite the settings block of FILE")
    ns = p.parse_args(argv)
    if ns.readme is not None:
        print(f"{ns.readme}: {'updated' if write_readme(ns.readme) else 'already current'}")
    else:
        sys.stdout.write(markdown() if ns.markdown else help_text() + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
