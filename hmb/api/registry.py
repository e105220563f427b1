"""The handler registry: each handler declares its API key and versions beside itself.

Rule: a handler module registers its ``handle`` function with
:func:`handles`, which states the key and the inclusive version range it
serves.  Nothing else lists handlers: :mod:`hmb.api` imports every module of
the package, so a new API key is one new module here (plus its grammar in
:mod:`kproto.messages` and a test named after the key).  The same table
answers ApiVersions, so what is advertised is exactly what is served.

A handler may only claim versions kproto declares a grammar for.
:func:`undeclared` lists the claims that break this rule; the registry test
runs it, so a wrong range fails the suite, not a client on the wire.  It is
not checked at registration: that would import a grammar module per served
key at start-up, and kproto loads a key's grammar only when it is first
spoken.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kproto import ApiKey
from kproto.registry import request_declaration

if TYPE_CHECKING:
    from hmb.api.context import Reply, RequestContext

HandleFn = Callable[["RequestContext"], Awaitable["Reply"]]


@dataclass(frozen=True)
class Handler:
    """One API key's handler and the versions it serves (what ApiVersions lists for the key)."""

    api_key: int
    min_version: int
    max_version: int
    handle: HandleFn

    def supports(self, version: int) -> bool:
        return self.min_version <= version <= self.max_version


HANDLERS: dict[int, Handler] = {}
"""api key -> the handler serving it (filled as handler modules are imported)."""


def handles(api_key: ApiKey, versions: tuple[int, int]) -> Callable[[HandleFn], HandleFn]:
    """Register the decorated coroutine as the handler of ``api_key`` for ``versions`` (inclusive)."""
    low, high = versions
    name = ApiKey.name_of(api_key)

    def register(fn: HandleFn) -> HandleFn:
        if api_key in HANDLERS:
            raise ValueError(
                f"{name} has two handlers: {HANDLERS[api_key].handle.__module__} and {fn.__module__}"
            )
        HANDLERS[int(api_key)] = Handler(int(api_key), low, high, fn)
        return fn

    return register


def undeclared(handlers: dict[int, Handler] | None = None) -> list[str]:
    """The served ranges kproto has no grammar for, one line each (empty when all agree)."""
    wrong = []
    for key, handler in sorted((HANDLERS if handlers is None else handlers).items()):
        grammar = request_declaration(key)
        low, high = handler.min_version, handler.max_version
        if grammar is None or not grammar.min_version <= low <= high <= grammar.max_version:
            declared = "none" if grammar is None else f"v{grammar.min_version}-v{grammar.max_version}"
            wrong.append(f"{ApiKey.name_of(key)} v{low}-v{high} is served, but kproto declares {declared}")
    return wrong
