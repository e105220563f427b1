"""The leader-epoch check of requests that carry the epoch their client last saw.

Fetch (v9+), ListOffsets (v4+) and OffsetForLeaderEpoch (v2+) name, per
partition, the ``current_leader_epoch`` the client believes in, so that a
client talking to a deposed or not-yet-informed leader finds out.  As Kafka
checks it: -1 means "no epoch, do not check"; an older epoch than the
leader's is FENCED_LEADER_EPOCH (the client's metadata is stale: refresh
it); a newer one is UNKNOWN_LEADER_EPOCH (this broker has not heard of it
yet: retry).  On one broker the leader's epoch is
:data:`hmb.log.leader_epochs.LEADER_EPOCH`; in a cluster it is the one the
controller wrote in the partition's state znode (and tells clients in
Metadata), which grows each time a broker takes the leadership.
"""

from __future__ import annotations

from hmb.api.context import RequestContext
from hmb.log.leader_epochs import LEADER_EPOCH
from kproto import ErrorCode

NO_EPOCH = -1


def leader_epoch(ctx: RequestContext, topic: str, partition: int) -> int:
    """This broker's leader epoch of the partition, as Metadata tells clients."""
    cluster = ctx.services.cluster
    if cluster is not None:
        state = cluster.view.states.get((topic, partition))
        if state is not None:
            return int(state.leader_epoch)
    return LEADER_EPOCH


def epoch_error(
    ctx: RequestContext, topic: str, partition: int, current_leader_epoch: int
) -> ErrorCode | None:
    """The error for a client's ``current_leader_epoch`` of a partition, or None when it may proceed."""
    if current_leader_epoch == NO_EPOCH:
        return None
    epoch = leader_epoch(ctx, topic, partition)
    if current_leader_epoch == epoch:
        return None
    if current_leader_epoch < epoch:
        return ErrorCode.FENCED_LEADER_EPOCH
    return ErrorCode.UNKNOWN_LEADER_EPOCH
