"""Which requests and responses kproto has grammars for.

One entry per API key, from the one module per key in
:mod:`kproto.messages`.  The broker's own handler registry decides what it
*serves*; this only says what kproto can encode and decode.
"""

from __future__ import annotations

from kproto.errors import UnsupportedVersionError
from kproto.messages import (
    api_versions,
    create_topics,
    delete_topics,
    describe_groups,
    fetch,
    find_coordinator,
    heartbeat,
    init_producer_id,
    join_group,
    leave_group,
    list_groups,
    list_offsets,
    metadata,
    offset_commit,
    offset_fetch,
    produce,
    sync_group,
)
from kproto.schema import Message

_MODULES = (
    produce,
    fetch,
    list_offsets,
    metadata,
    offset_commit,
    offset_fetch,
    find_coordinator,
    join_group,
    heartbeat,
    leave_group,
    sync_group,
    describe_groups,
    list_groups,
    api_versions,
    create_topics,
    delete_topics,
    init_producer_id,
)

REQUESTS: dict[int, Message] = {m.REQUEST.api_key: m.REQUEST for m in _MODULES}
RESPONSES: dict[int, Message] = {m.RESPONSE.api_key: m.RESPONSE for m in _MODULES}


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
    return {key: (m.min_version, m.max_version) for key, m in sorted(REQUESTS.items())}
