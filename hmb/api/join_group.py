"""JoinGroup v0-5: become a member of a consumer group (a long-poll until the rebalance completes).

Thin: the group logic is :class:`hmb.groups.coordinator.GroupCoordinator`.
Version differences handled here: v0 has no rebalance timeout (Kafka uses
the session timeout), v4+ first joins without a member id are answered
MEMBER_ID_REQUIRED with the id to use (KIP-394; static members skip that
round trip), v5's ``group_instance_id`` makes the member static (KIP-345:
a restarted instance takes over its old membership, see
:mod:`hmb.groups.coordinator`) and the leader's member list carries each
member's instance id.  A client that
disconnects while waiting gets no answer and its wait ends at once.
"""

from __future__ import annotations

from hmb.api.authz import group_allowed
from hmb.api.context import NO_RESPONSE, Reply, RequestContext
from hmb.api.leadership import not_coordinator
from hmb.api.registry import handles
from hmb.groups.longpoll import unless_gone
from hmb.security.acl import Operation
from kproto import ApiKey, ErrorCode


def client_host(peer: str) -> str:
    """Kafka reports a member's host as ``/address``."""
    return "/" + peer.rsplit(":", 1)[0]


@handles(ApiKey.JOIN_GROUP, versions=(0, 5))
async def handle(ctx: RequestContext) -> Reply:
    body = ctx.request.body
    version = ctx.request.version
    session_ms = body.session_timeout_ms
    refused = None
    if not group_allowed(ctx, Operation.READ, body.group_id):
        refused = ErrorCode.GROUP_AUTHORIZATION_FAILED
    elif not_coordinator(ctx, body.group_id):
        refused = ErrorCode.NOT_COORDINATOR
    if refused is not None:
        return {
            "throttle_time_ms": 0,
            "error_code": refused,
            "generation_id": -1,
            "protocol_name": "",
            "leader": "",
            "member_id": body.member_id,
            "members": [],
        }
    result = await unless_gone(
        ctx.client_gone,
        lambda: ctx.groups.join(
            body.group_id,
            body.member_id,
            body.protocol_type,
            [(p.name, bytes(p.metadata)) for p in body.protocols],
            session_timeout_ms=session_ms,
            rebalance_timeout_ms=body.get("rebalance_timeout_ms", session_ms),
            client_id=ctx.request.client_id or "",
            client_host=client_host(ctx.peer),
            group_instance_id=body.get("group_instance_id"),
            require_known_member_id=version >= 4,
        ),
    )
    if result is None:
        return NO_RESPONSE  # nobody is listening
    return {
        "throttle_time_ms": 0,
        "error_code": result.error,
        "generation_id": result.generation_id,
        "protocol_name": result.protocol_name,
        "leader": result.leader,
        "member_id": result.member_id,
        "members": [
            {"member_id": mid, "group_instance_id": instance, "metadata": meta}
            for (mid, meta), instance in zip(result.members, result.instance_ids, strict=True)
        ],
    }
