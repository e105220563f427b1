"""SaslHandshake v0-v1: choose the SASL mechanism of the exchange that follows (hmb.api.sasl)."""

from __future__ import annotations

from hmb.api import sasl
from hmb.api.context import Reply, RequestContext
from hmb.api.registry import handles
from kproto import ApiKey

VERSIONS = (0, 1)


@handles(ApiKey.SASL_HANDSHAKE, versions=VERSIONS)
async def handle(ctx: RequestContext) -> Reply:
    error, mechanisms = sasl.begin(ctx.services, ctx.session, ctx.request.body.mechanism, ctx.request.version)
    return {"error_code": error, "mechanisms": mechanisms}
