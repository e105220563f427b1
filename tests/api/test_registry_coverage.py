"""Every served API key has its test module here, named after its handler module.

A new key is a new handler module ``hmb/api/<name>.py`` (registered with
``@handles``) and a new ``tests/api/test_<name>.py`` covering each of its
version boundaries; this test fails until the second exists.
"""

from __future__ import annotations

from pathlib import Path

from hmb.api import HANDLERS
from kproto import ApiKey

HERE = Path(__file__).resolve().parent


def test_every_handler_has_a_test_module() -> None:
    missing = []
    for handler in HANDLERS.values():
        name = handler.handle.__module__.rsplit(".", 1)[-1]
        if not (HERE / f"test_{name}.py").is_file():
            missing.append(f"{ApiKey.name_of(handler.api_key)}: tests/api/test_{name}.py")
    assert not missing, "API keys without in-process tests: " + ", ".join(missing)


def test_every_test_module_here_names_a_handler_or_a_rule() -> None:
    """No stale module: a test_<name>.py for a key no longer served would mislead a reader."""
    handlers = {h.handle.__module__.rsplit(".", 1)[-1] for h in HANDLERS.values()}
    # the dispatcher's rules, this file, and features that span several keys
    others = {
        "dispatch",
        "registry_coverage",
        "static_membership",
        "topic_configs",
        "scale",
        "read_committed",
        "transactions",
        "transactions_v2",
        "fetch_sessions",
        "compaction",
        "rack",
        "replication_leader",
    }
    stale = sorted(
        p.name for p in HERE.glob("test_*.py") if p.stem.removeprefix("test_") not in handlers | others
    )
    assert not stale, f"test modules naming no API key: {stale}"
