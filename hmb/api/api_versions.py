"""ApiVersions: what this broker serves, read from the handler registry itself.

Modern clients ask this first and then use, per API, the highest version
both sides know.  The table is built from the handler registry
(:mod:`hmb.api.registry`), so what is advertised is exactly what is
served.  A request version above ours is answered (by the dispatcher, which
cannot decode it) with UNSUPPORTED_VERSION in the v0 layout, listing the
table, as Kafka does; the client then retries with a version from it.
From v3 the answer also lists the feature levels (:mod:`hmb.api.features`).
"""

from __future__ import annotations

from typing import Any

import kproto
from hmb.api.context import Reply, RequestContext
from hmb.api.features import features_body
from hmb.api.registry import HANDLERS, Handler, handles
from kproto import ApiKey, ErrorCode


def supported_table(handlers: dict[int, Handler] | None = None) -> list[dict[str, Any]]:
    """``[{api_key, min_version, max_version}, ...]`` of ``handlers`` (default: the registry)."""
    table = HANDLERS if handlers is None else handlers
    return [
        {"api_key": h.api_key, "min_version": h.min_version, "max_version": h.max_version}
        for h in sorted(table.values(), key=lambda h: h.api_key)
    ]


def unsupported_version_response(
    correlation_id: int,
    handlers: dict[int, Handler] | None = None,
    table: list[dict[str, Any]] | None = None,
) -> bytes:
    """ApiVersions v0 body with error 35: readable by a client of any version (``table``: what
    to list instead of ``handlers``' ranges)."""
    listed = supported_table(handlers) if table is None else table
    body = {"error_code": ErrorCode.UNSUPPORTED_VERSION, "api_keys": listed}
    return kproto.encode_response(ApiKey.API_VERSIONS, 0, correlation_id, body)


def answer_body(table: list[dict[str, Any]]) -> dict[str, Any]:
    """The ApiVersions answer listing ``table``, with the feature levels (v3+)."""
    return {
        "error_code": ErrorCode.NONE,
        "api_keys": table,
        "throttle_time_ms": 0,
        "tagged_fields": features_body(),
    }


# (version, number of registered handlers) -> the frame with correlation id 0.  The
# registry only grows (a key cannot be registered twice), so its size names its content.
_ENCODED: dict[tuple[int, int], bytes] = {}


@handles(ApiKey.API_VERSIONS, versions=(0, 4))
async def handle(ctx: RequestContext) -> Reply:
    """Every client asks this first, on every connection: the answer is encoded once per
    version and table (encoding it each time was a tenth of the cost of opening a connection,
    and listing the table each time another 3%)."""
    key = (ctx.request.version, len(HANDLERS))
    frame = _ENCODED.get(key)
    if frame is None:
        body = answer_body(supported_table())
        frame = _ENCODED[key] = kproto.encode_response(ApiKey.API_VERSIONS, ctx.request.version, 0, body)
    # the frame: size, correlation id (response header v0 at every version), body
    return frame[:4] + ctx.request.correlation_id.to_bytes(4, "big", signed=True) + frame[8:]
