"""The handler registry: each handler declares its API key and versions beside itself.

Rules:

* A handler module registers its ``handle`` function with :func:`handles`,
  which states the key and the inclusive version range it serves.  That
  declaration is the only place a key's versions are written by hand, and
  the same registry answers ApiVersions, so what is advertised is exactly
  what is served.
* :data:`HANDLERS` is built from the handler index
  (:mod:`hmb.api.handler_index`), which is written from those declarations
  by ``python scripts/gen_kproto_messages.py --readme README.md``.  A
  starting broker thus answers ApiVersions without importing fifty handler
  modules (a sixth of what ``hmb serve`` imported before its first answer):
  a handler's module is imported the first time its key is spoken.  When
  it is, its declaration must say what its row said (module, key,
  versions), or the request fails with the command that rewrites the
  index; the registry test imports every module and fails first.
* A key has one handler: a second declaration of it is refused.
* A handler may only claim versions kproto declares a grammar for.
  :func:`undeclared` lists the claims that break this rule; the registry
  test runs it, so a wrong range fails the suite, not a client on the
  wire.  It is not checked at registration: that would import a grammar
  module per served key at start-up, and kproto loads a key's grammar only
  when it is first spoken.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from hmb.api import handler_index
from kproto import ApiKey
from kproto.registry import request_declaration

if TYPE_CHECKING:
    from hmb.api.context import Reply, RequestContext

HandleFn = Callable[["RequestContext"], Awaitable["Reply"]]

REWRITE_INDEX = "python scripts/gen_kproto_messages.py --readme README.md"
"""The command that rewrites the handler index (and the README's table) from the declarations."""


class Handler:
    """One API key's handler and the versions it serves (what ApiVersions lists for the key).

    A handler from the index knows where its coroutine lives; :attr:`handle`
    imports that module the first time it is asked for."""

    __slots__ = ("_fn", "api_key", "max_version", "min_version", "module")

    def __init__(
        self,
        api_key: int,
        min_version: int,
        max_version: int,
        handle: HandleFn | None = None,
        *,
        module: str | None = None,
    ) -> None:
        self.api_key = api_key
        self.min_version = min_version
        self.max_version = max_version
        self._fn = handle
        if module is None:
            if handle is None:
                raise TypeError("a Handler needs its coroutine or the module that declares it")
            module = handle.__module__
        self.module = module

    def __repr__(self) -> str:
        name = ApiKey.name_of(self.api_key)
        return f"Handler({name} v{self.min_version}-v{self.max_version} in {self.module})"

    def supports(self, version: int) -> bool:
        return self.min_version <= version <= self.max_version

    @property
    def handle(self) -> HandleFn:
        """The coroutine answering the key, its module imported on first use."""
        if self._fn is None:
            importlib.import_module(self.module)
            declared = DECLARED.get(self.api_key)
            if declared is None or _row(declared) != _row(self):
                found = "nothing" if declared is None else repr(declared)
                raise LookupError(
                    f"the handler index lists {self!r}, the code declares {found}: run {REWRITE_INDEX}"
                )
            self._fn = declared._fn
        assert self._fn is not None
        return self._fn


def _row(handler: Handler) -> tuple[str, int, int, int]:
    return handler.module, handler.api_key, handler.min_version, handler.max_version


HANDLERS: dict[int, Handler] = {
    int(key): Handler(int(key), low, high, module=f"hmb.api.{module}")
    for key, module, low, high in handler_index.INDEX
}
"""api key -> the handler serving it: every row of the handler index."""

DECLARED: dict[int, Handler] = {}
"""api key -> the handler its module declares, for the modules imported so far."""


def handles(api_key: ApiKey, versions: tuple[int, int]) -> Callable[[HandleFn], HandleFn]:
    """Register the decorated coroutine as the handler of ``api_key`` for ``versions`` (inclusive)."""
    low, high = versions
    name = ApiKey.name_of(api_key)

    def register(fn: HandleFn) -> HandleFn:
        # a second declaration of the key, or a module other than the one the index names
        first = DECLARED.get(api_key) or HANDLERS.get(api_key)
        if first is not None and (api_key in DECLARED or first.module != fn.__module__):
            raise ValueError(f"{name} has two handlers: {first.module} and {fn.__module__}")
        DECLARED[int(api_key)] = Handler(int(api_key), low, high, fn)
        return fn

    return register


def declared_handlers() -> dict[int, Handler]:
    """Every module of :mod:`hmb.api` imported: the handlers as the code declares them
    (what the handler index is written from, and checked against)."""
    import hmb.api

    for info in sorted(pkgutil.iter_modules(hmb.api.__path__), key=lambda m: m.name):
        importlib.import_module(f"hmb.api.{info.name}")
    return dict(sorted(DECLARED.items()))


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
