"""kproto's, the broker's and the client's version tables never disagree.

kproto declares what can be encoded and decoded; the broker serves a part
of that (each handler registers its key and range beside itself); the
client sends a part of that.  A version served or sent that kproto does not
declare would fail on the wire, so it must fail here first.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from hmb.api import HANDLERS
from hmb.api.registry import handles
from kproto import ApiKey
from kproto.registry import REQUESTS, RESPONSES, supported_versions

ROOT = Path(__file__).resolve().parents[1]


def test_every_served_version_has_a_grammar_both_ways() -> None:
    for key, handler in HANDLERS.items():
        for version in range(handler.min_version, handler.max_version + 1):
            assert version in REQUESTS[key].valid, (ApiKey.name_of(key), version)
            assert version in RESPONSES[key].valid, (ApiKey.name_of(key), version)


def test_kproto_registry_is_every_message_module() -> None:
    modules = sorted(p.stem for p in (ROOT / "kproto" / "messages").glob("*.py") if p.stem != "__init__")
    assert len(REQUESTS) == len(RESPONSES) == len(modules)
    assert supported_versions() == {k: (m.min_version, m.max_version) for k, m in REQUESTS.items()}


def test_every_handler_module_registers_one_handler() -> None:
    """A module with a ``handle`` coroutine is in the registry: none can be forgotten."""
    registered = {h.handle.__module__ for h in HANDLERS.values()}
    for path in sorted((ROOT / "hmb" / "api").glob("*.py")):
        tree = ast.parse(path.read_text())
        defines = any(isinstance(n, ast.AsyncFunctionDef) and n.name == "handle" for n in tree.body)
        if (
            defines
            and "handles_once_declared" in path.read_text()
            and f"hmb.api.{path.stem}" not in registered
        ):
            continue  # written before kproto has its grammar: registers once it does
        assert defines == (f"hmb.api.{path.stem}" in registered), path.name
    assert len(registered) == len(HANDLERS)


def test_a_handler_cannot_claim_a_version_kproto_lacks() -> None:
    high = REQUESTS[ApiKey.HEARTBEAT].max_version
    with pytest.raises(ValueError, match=r"HEARTBEAT v0-v\d+ is served, but kproto declares v0-v\d+"):
        handles(ApiKey.HEARTBEAT, versions=(0, high + 1))


def test_a_key_cannot_have_two_handlers() -> None:
    async def handle(ctx: object) -> dict[str, object]:
        return {}

    with pytest.raises(ValueError, match="two handlers"):
        handles(ApiKey.HEARTBEAT, versions=(0, 0))(handle)  # type: ignore[arg-type]
    assert HANDLERS[ApiKey.HEARTBEAT].handle is not handle
