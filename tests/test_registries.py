"""kproto's, the broker's and the client's version tables never disagree.

kproto declares what can be encoded and decoded; the broker serves a part
of that (each handler registers its key and range beside itself); the
client sends a part of that.  A version served or sent that kproto does not
declare would fail on the wire, so it must fail here first.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from hmb.api import HANDLERS
from hmb.api.handler_index import INDEX
from hmb.api.registry import DECLARED, REWRITE_INDEX, Handler, declared_handlers, handles, undeclared
from kproto import ApiKey
from kproto.registry import REQUESTS, RESPONSES, supported_versions

ROOT = Path(__file__).resolve().parents[1]


def test_every_served_version_has_a_grammar_both_ways() -> None:
    for key, handler in HANDLERS.items():
        for version in range(handler.min_version, handler.max_version + 1):
            assert version in REQUESTS[key].valid, (ApiKey.name_of(key), version)
            assert version in RESPONSES[key].valid, (ApiKey.name_of(key), version)


def test_kproto_loads_a_grammar_when_its_key_is_first_spoken() -> None:
    """A fresh interpreter serving ApiVersions has not built the other sixty grammars.

    (A handler may import constants from its own key's module, as ListOffsets does.)"""
    code = (
        "import sys, kproto, hmb.api; "
        "kproto.decode_request(kproto.encode_request(18, 0, correlation_id=1, body={}, client_id='t')); "
        "print(sorted(m for m in sys.modules if m.startswith('kproto.messages.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    loaded = ast.literal_eval(out.stdout)
    assert "kproto.messages.api_versions" in loaded
    assert "kproto.messages.heartbeat" not in loaded
    assert len(loaded) <= 3, loaded


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
        assert defines == (f"hmb.api.{path.stem}" in registered), path.name
    assert len(registered) == len(HANDLERS)


def test_the_handler_index_is_what_the_handlers_declare() -> None:
    """The broker serves from the index without importing the handlers: it must say what they say."""
    rows = {h.api_key: (h.module, h.min_version, h.max_version) for h in declared_handlers().values()}
    index = {int(key): (f"hmb.api.{module}", low, high) for key, module, low, high in INDEX}
    assert index == rows, f"the handler index is stale: run {REWRITE_INDEX}"
    assert len(INDEX) == len(index)


def test_a_stale_index_row_fails_its_first_request_with_the_fix() -> None:
    stale = Handler(ApiKey.HEARTBEAT, 0, 99, module="hmb.api.heartbeat")
    with pytest.raises(LookupError, match=re.escape(REWRITE_INDEX)):
        stale.handle  # noqa: B018 (the property imports the module and checks its declaration)
    assert DECLARED[ApiKey.HEARTBEAT].max_version < 99


def test_no_handler_claims_a_version_kproto_lacks() -> None:
    assert undeclared() == []


def test_a_claim_beyond_kproto_is_reported() -> None:
    high = REQUESTS[ApiKey.HEARTBEAT].max_version

    async def handle(ctx: object) -> dict[str, object]:
        return {}

    claims = {
        ApiKey.HEARTBEAT: Handler(ApiKey.HEARTBEAT, 0, high + 1, handle),
        9999: Handler(9999, 0, 0, handle),
    }
    assert undeclared(claims) == [  # type: ignore[arg-type]
        f"HEARTBEAT v0-v{high + 1} is served, but kproto declares v0-v{high}",
        "UNKNOWN_API_KEY_9999 v0-v0 is served, but kproto declares none",
    ]


def test_a_key_cannot_have_two_handlers() -> None:
    async def handle(ctx: object) -> dict[str, object]:
        return {}

    with pytest.raises(ValueError, match="two handlers"):
        handles(ApiKey.HEARTBEAT, versions=(0, 0))(handle)  # type: ignore[arg-type]
    assert HANDLERS[ApiKey.HEARTBEAT].handle is not handle
