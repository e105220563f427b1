"""ListGroups v0-5: every group this broker coordinates.

As Kafka does, that includes groups known only from committed offsets
(consumers that assign partitions themselves), with an empty protocol type
and the state "Empty".  v3+ flexible; v4+ (KIP-518) each group carries its
state and ``states_filter`` keeps the groups in one of the named states;
v5+ (KIP-848) each group carries its type and ``types_filter`` keeps the
groups of the named types.  Every group here is a classic group (the
KIP-848 consumer protocol is not served yet).  Both filters compare without
regard to case and an empty filter keeps everything, as in Kafka.
"""

from __future__ import annotations

from hmb.api.authz import cluster_allowed, group_allowed
from hmb.api.context import Reply, RequestContext
from hmb.api.registry import handles
from hmb.groups.states import GroupState
from hmb.security.acl import Operation
from kproto import ApiKey, ErrorCode

CLASSIC_GROUP_TYPE = "classic"
"""What Kafka calls a group of JoinGroup/SyncGroup members (``Group.GroupType.CLASSIC``)."""


def _state(ctx: RequestContext, group_id: str) -> str:
    group = ctx.groups.describe(group_id)
    return group.state.value if group is not None else GroupState.EMPTY.value


def _kept(value: str, wanted: list[str]) -> bool:
    return not wanted or value.lower() in {w.lower() for w in wanted}


@handles(ApiKey.LIST_GROUPS, versions=(0, 5))
async def handle(ctx: RequestContext) -> Reply:
    body = ctx.request.body
    known = dict(ctx.groups.listing())
    for group_id in ctx.offsets.groups():
        known.setdefault(group_id, "")
    if not cluster_allowed(ctx, Operation.DESCRIBE):  # else only the groups it may describe
        known = {g: kind for g, kind in known.items() if group_allowed(ctx, Operation.DESCRIBE, g)}
    states = list(body.get("states_filter") or ())
    types = list(body.get("types_filter") or ())
    groups = []
    for group_id in sorted(known):
        state = _state(ctx, group_id)
        if _kept(state, states) and _kept(CLASSIC_GROUP_TYPE, types):
            groups.append(
                {
                    "group_id": group_id,
                    "protocol_type": known[group_id],
                    "group_state": state,
                    "group_type": CLASSIC_GROUP_TYPE,
                }
            )
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "groups": groups}
