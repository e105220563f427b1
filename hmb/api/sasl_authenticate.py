"""SaslAuthenticate v0-v2: one token of the SASL exchange (hmb.api.sasl); v1 adds the session lifetime."""

from __future__ import annotations

from hmb.api import sasl
from hmb.api.context import Reply, RequestContext
from hmb.api.registry import handles
from kproto import ApiKey

VERSIONS = (0, 2)


@handles(ApiKey.SASL_AUTHENTICATE, versions=VERSIONS)
async def handle(ctx: RequestContext) -> Reply:
    outcome = await sasl.step(ctx.services, ctx.session, bytes(ctx.request.body.auth_bytes))
    return {
        "error_code": outcome.error_code,
        "error_message": outcome.error_message,
        "auth_bytes": outcome.token,
        "session_lifetime_ms": outcome.session_lifetime_ms,
    }
