"""Which requests and responses kproto has grammars for.

Rules of this module:

* The registry is *found*, never listed.  Every module in
  :mod:`kproto.messages` declares one API key (``REQUEST`` and ``RESPONSE``,
  :class:`kproto.schema.Message`) and is named after it: the key's name in
  :class:`kproto.api_keys.ApiKey`, lower case (``HEARTBEAT`` ->
  ``kproto.messages.heartbeat``).  Adding a key is adding a module there,
  and nothing here changes.
* A key's module is imported the first time that key is encoded or
  decoded, not before: a process that speaks five keys pays for five
  grammars, and a broker starts without building sixty.  ``REQUESTS`` and
  ``RESPONSES`` (every declaration, by key) load all of them on first use.
* A module whose name and key disagree, or whose request and response
  declare different keys, is an error at its import; so no key can be
  declared twice.

The broker's own handler registry decides what it *serves*; this only says
what kproto can encode and decode.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

from kproto import messages
from kproto.api_keys import ApiKey
from kproto.errors import UnsupportedVersionError
from kproto.schema import Message

_requests: dict[int, Message] = {}
_responses: dict[int, Message] = {}
_missing: set[int] = set()  # keys looked up that have no module
_loaded: set[str] = set()  # names of the imported message modules


def _load_module(name: str) -> None:
    module = importlib.import_module(f"{messages.__name__}.{name}")
    request: Message = module.REQUEST
    response: Message = module.RESPONSE
    key = request.api_key
    if key is None or key != response.api_key:
        raise ImportError(f"{module.__name__}: REQUEST and RESPONSE must declare the same api key")
    expected = ApiKey.name_of(key).lower()
    if expected != name:
        raise ImportError(f"{module.__name__} declares api key {key}; it must be named {expected}")
    _requests[key] = request
    _responses[key] = response
    _loaded.add(name)


def _declared(api_key: int) -> bool:
    """Import ``api_key``'s module if it has one; whether it does."""
    if api_key in _requests:
        return True
    if api_key in _missing:
        return False
    try:
        name = ApiKey(api_key).name.lower()
        _load_module(name)
    except (ValueError, ModuleNotFoundError):
        _missing.add(api_key)
        return False
    return True


def request_declaration(api_key: int) -> Message | None:
    """The request declaration of ``api_key`` (any version), or None if kproto has none."""
    return _requests[api_key] if _declared(api_key) else None


def response_declaration(api_key: int) -> Message | None:
    """The response declaration of ``api_key`` (any version), or None if kproto has none."""
    return _responses[api_key] if _declared(api_key) else None


def request_message(api_key: int, version: int) -> Message:
    """The request declaration for ``api_key`` that has ``version``."""
    msg = request_declaration(api_key)
    if msg is None or version not in msg.valid:
        raise UnsupportedVersionError(api_key, version)
    return msg


def response_message(api_key: int, version: int) -> Message:
    """The response declaration for ``api_key`` that has ``version``."""
    msg = response_declaration(api_key)
    if msg is None or version not in msg.valid:
        raise UnsupportedVersionError(api_key, version)
    return msg


def _load_all() -> None:
    """Import every message module (a module named after its key cannot be declared twice)."""
    for info in pkgutil.iter_modules(messages.__path__):
        if not info.name.startswith("_") and info.name not in _loaded:
            _load_module(info.name)


def supported_versions() -> dict[int, tuple[int, int]]:
    """``api_key -> (min, max)`` for every request kproto can decode."""
    _load_all()
    return {key: (m.min_version, m.max_version) for key, m in sorted(_requests.items())}


def __getattr__(name: str) -> Any:
    """``REQUESTS`` / ``RESPONSES``: every declaration by key, loading all modules once."""
    if name in ("REQUESTS", "RESPONSES"):
        _load_all()
        table = _requests if name == "REQUESTS" else _responses
        return dict(sorted(table.items()))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
