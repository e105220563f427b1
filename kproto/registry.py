"""Which requests and responses kproto has grammars for.

Rule: the registry is *found*, never listed.  Every module in
:mod:`kproto.messages` declares one API key (``REQUEST`` and ``RESPONSE``,
:class:`kproto.schema.Message`), and this module imports them all at load
time; adding a key is adding a module there, and nothing here changes.
Two modules declaring the same key is an error at import.

The broker's own handler registry decides what it *serves*; this only says
what kproto can encode and decode.
"""

from __future__ import annotations

import importlib
import pkgutil

from kproto import messages
from kproto.errors import UnsupportedVersionError
from kproto.schema import Message


def _discover() -> tuple[dict[int, Message], dict[int, Message]]:
    requests: dict[int, Message] = {}
    responses: dict[int, Message] = {}
    for info in sorted(pkgutil.iter_modules(messages.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{messages.__name__}.{info.name}")
        request: Message = module.REQUEST
        response: Message = module.RESPONSE
        key = request.api_key
        if key is None or key != response.api_key:
            raise ImportError(f"{module.__name__}: REQUEST and RESPONSE must declare the same api key")
        if key in requests:
            raise ImportError(f"{module.__name__}: api key {key} is declared twice")
        requests[key] = request
        responses[key] = response
    return dict(sorted(requests.items())), dict(sorted(responses.items()))


REQUESTS, RESPONSES = _discover()


def request_message(api_key: int, version: int) -> Message:
    """The request declaration for ``api_key`` that has ``version``."""
    msg = REQUESTS.get(api_key)
    if msg is None or version not in msg.valid:
        raise UnsupportedVersionError(api_key, version)
    return msg


def response_message(api_key: int, version: int) -> Message:
    """The response declaration for ``api_key`` that has ``version``."""
    msg = RESPONSES.get(api_key)
    if msg is None or version not in msg.valid:
        raise UnsupportedVersionError(api_key, version)
    return msg


def supported_versions() -> dict[int, tuple[int, int]]:
    """``api_key -> (min, max)`` for every request kproto can decode."""
    return {key: (m.min_version, m.max_version) for key, m in REQUESTS.items()}
