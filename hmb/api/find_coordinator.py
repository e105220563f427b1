"""FindCoordinator (0.8.2 GroupCoordinator): every group is coordinated here."""

from __future__ import annotations

from hmb.api.context import Reply, RequestContext
from kproto import ApiKey, ErrorCode

API_KEY = ApiKey.FIND_COORDINATOR
VERSIONS = (0, 0)


async def handle(ctx: RequestContext) -> Reply:
    adv = ctx.broker.advertised()
    return {
        "error_code": ErrorCode.NONE,
        "node_id": ctx.broker.config.node_id,
        "host": adv.host,
        "port": adv.port,
    }
