"""ApiVersions: what this broker serves, read from the handler registry itself.

Modern clients ask this first and then use, per API, the highest version
both sides know.  The table is built from :data:`hmb.api.HANDLERS`, so
what is advertised is exactly what is served.  A request version above
ours is answered (by the network layer, which cannot decode it) with
UNSUPPORTED_VERSION in the v0 layout, listing the table, as Kafka does; the
client then retries with a version from it.
"""

from __future__ import annotations

from typing import Any

import kproto
from hmb.api.context import Reply, RequestContext
from kproto import ApiKey, ErrorCode

API_KEY = ApiKey.API_VERSIONS
VERSIONS = (0, 3)


def supported_table() -> list[dict[str, Any]]:
    from hmb.api import HANDLERS  # the registry imports this module

    return [
        {"api_key": h.api_key, "min_version": h.min_version, "max_version": h.max_version}
        for h in sorted(HANDLERS.values(), key=lambda h: h.api_key)
    ]


def unsupported_version_response(correlation_id: int) -> bytes:
    """ApiVersions v0 body with error 35: readable by a client of any version."""
    body = {"error_code": ErrorCode.UNSUPPORTED_VERSION, "api_keys": supported_table()}
    return kproto.encode_response(API_KEY, 0, correlation_id, body)


async def handle(ctx: RequestContext) -> Reply:
    return {"error_code": ErrorCode.NONE, "api_keys": supported_table(), "throttle_time_ms": 0}
