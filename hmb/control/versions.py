"""Version caps: a broker under test that serves only the older versions of some APIs.

A test (or a benchmark) that must see how a client behaves against an older
broker, or compare one API's classic layout with its flexible one through
the same client, caps the versions this broker advertises:
``limit_versions({"PRODUCE": 8, "FETCH": 11})`` makes it answer like a
broker whose newest Produce is v8 and newest Fetch v11 (both before the
flexible layouts).  Rules:

1. ApiVersions lists ``min(served, cap)`` as each capped key's newest
   version; the other keys are listed as served.  A client picks the newest
   version both sides know, so it falls back on its own.
2. A request above its key's cap is treated as an older broker would treat
   a version it does not know: the connection is closed (and logged), as
   the dispatcher does for a version hmb does not serve.
3. A cap below a key's oldest served version, or for a key hmb does not
   serve, is refused with the reason and changes nothing; an empty mapping
   lifts every cap.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hmb.api.api_versions import answer_body, supported_table, unsupported_version_response
from hmb.api.context import CloseConnection
from hmb.api.registry import HANDLERS
from kproto import ApiKey, Request


def parse_caps(caps: Mapping[int | str, int]) -> dict[int, int]:
    """``{api: newest version}`` checked against the handler registry (API keys by number or name)."""
    from hmb.control.faults import parse_api

    parsed: dict[int, int] = {}
    for api, cap in caps.items():
        key = parse_api(int(api) if isinstance(api, str) and api.isdigit() else api)
        handler = HANDLERS.get(key)
        if handler is None:
            raise ValueError(f"hmb does not serve {ApiKey.name_of(key)}: nothing to cap")
        if not handler.min_version <= int(cap):
            raise ValueError(
                f"{ApiKey.name_of(key)} cannot be capped at v{cap}: its oldest served version is "
                f"v{handler.min_version}"
            )
        parsed[key] = min(int(cap), handler.max_version)
    return parsed


def capped_table(caps: Mapping[int, int]) -> list[dict[str, Any]]:
    """The ApiVersions table with each capped key's newest version lowered (rule 1)."""
    return [
        {**row, "max_version": min(row["max_version"], caps.get(row["api_key"], row["max_version"]))}
        for row in supported_table()
    ]


def check(request: Request, caps: Mapping[int, int]) -> dict[str, Any] | bytes | None:
    """The capped ApiVersions answer for an ApiVersions request (a body, or the v0 frame of
    UNSUPPORTED_VERSION above its cap); None for another request within its cap; raises
    :class:`CloseConnection` for one above it (rule 2)."""
    cap = caps.get(request.api_key)
    if cap is not None and request.version > cap:
        if request.api_key == ApiKey.API_VERSIONS:  # as the dispatcher answers a client newer than us
            return unsupported_version_response(request.correlation_id, table=capped_table(caps))
        raise CloseConnection(
            f"unsupported request {ApiKey.name_of(request.api_key)} v{request.version} "
            f"(capped at v{cap} by the control API)"
        )
    if request.api_key != ApiKey.API_VERSIONS:
        return None
    return answer_body(capped_table(caps))
