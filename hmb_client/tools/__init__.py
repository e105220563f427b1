"""The ``hmb`` command-line tools, one module per command family.

Each module offers ``register(subparsers)``, which adds its subcommands with
``set_defaults(func=...)``; :mod:`hmb_client.cli` only dispatches.  Parsers
import nothing heavy: the client library (and trio) is imported when a
command runs, so ``hmb --help`` is instant.
"""
