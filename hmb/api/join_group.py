"""JoinGroup v0-9: become a member of a consumer group (a long-poll until the rebalance completes).

Thin: the group logic is :class:`hmb.groups.coordinator.GroupCoordinator`.
What each version carries, and how it is honoured here:

* v0 has no rebalance timeout (Kafka uses the session timeout).
* v4+: a first join without a member id is answered MEMBER_ID_REQUIRED with
  the id to use (KIP-394; static members skip that round trip).
* v5+: ``group_instance_id`` makes the member static (KIP-345: a restarted
  instance takes over its old membership, see :mod:`hmb.groups.coordinator`)
  and the leader's member list carries each member's instance id.
* v6+ flexible; v7+ answers the group's ``protocol_type`` beside the
  protocol name, both null on an error (Kafka's layout).
* v8+ ``reason`` (KIP-800) is logged with the member.
* v9+ ``skip_assignment`` (KIP-814): a static leader that restarts into a
  Stable group gets the member list but must not assign again; older
  versions get the same list and their new assignment is ignored by
  SyncGroup, which hands back the current one in a Stable group.

A client that disconnects while waiting gets no answer and its wait ends at once.
"""

from __future__ import annotations

import logging
from typing import Any

from hmb.api.authz import group_allowed
from hmb.api.context import NO_RESPONSE, Reply, RequestContext
from hmb.api.registry import handles
from hmb.groups.longpoll import unless_gone
from hmb.security.acl import Operation
from kproto import ApiKey, ErrorCode

log = logging.getLogger(__name__)


def client_host(peer: str) -> str:
    """Kafka reports a member's host as ``/address``."""
    return "/" + peer.rsplit(":", 1)[0]


def _failed(error: int, member_id: str, version: int) -> dict[str, Any]:
    """An error answer: no generation, no leader, and from v7 null protocol fields."""
    return {
        "throttle_time_ms": 0,
        "error_code": error,
        "generation_id": -1,
        "protocol_type": None,
        "protocol_name": None if version >= 7 else "",
        "leader": "",
        "skip_assignment": False,
        "member_id": member_id,
        "members": [],
    }


@handles(ApiKey.JOIN_GROUP, versions=(0, 9))
async def handle(ctx: RequestContext) -> Reply:
    body = ctx.request.body
    version = ctx.request.version
    session_ms = body.session_timeout_ms
    if not group_allowed(ctx, Operation.READ, body.group_id):
        return _failed(ErrorCode.GROUP_AUTHORIZATION_FAILED, body.member_id, version)
    if body.get("reason"):
        log.info("group %s: member %r joins: %s", body.group_id, body.member_id, body.reason)
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
    if result.error != ErrorCode.NONE:
        return _failed(result.error, result.member_id, version)
    group = ctx.groups.describe(body.group_id)
    return {
        "throttle_time_ms": 0,
        "error_code": result.error,
        "generation_id": result.generation_id,
        "protocol_type": group.protocol_type if group is not None else body.protocol_type,
        "protocol_name": result.protocol_name,
        "leader": result.leader,
        "skip_assignment": result.skip_assignment,
        "member_id": result.member_id,
        "members": [
            {"member_id": mid, "group_instance_id": instance, "metadata": meta}
            for (mid, meta), instance in zip(result.members, result.instance_ids, strict=True)
        ],
    }
