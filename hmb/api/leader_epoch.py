"""The leader-epoch check of requests that carry the epoch their client last saw.

Fetch (v9+), ListOffsets (v4+) and OffsetForLeaderEpoch (v2+) name, per
partition, the ``current_leader_epoch`` the client believes in, so that a
client talking to a deposed or not-yet-informed leader finds out.  As Kafka
checks it: -1 means "no epoch, do not check"; an older epoch than the
leader's is FENCED_LEADER_EPOCH (the client's metadata is stale: refresh
it); a newer one is UNKNOWN_LEADER_EPOCH (this broker has not heard of it
yet: retry).  On one broker the leader's epoch is
:data:`hmb.log.leader_epochs.LEADER_EPOCH`.
"""

from __future__ import annotations

from hmb.log.leader_epochs import LEADER_EPOCH
from kproto import ErrorCode

NO_EPOCH = -1


def epoch_error(current_leader_epoch: int) -> ErrorCode | None:
    """The error for a client's ``current_leader_epoch``, or None when it may proceed."""
    if current_leader_epoch == NO_EPOCH or current_leader_epoch == LEADER_EPOCH:
        return None
    if current_leader_epoch < LEADER_EPOCH:
        return ErrorCode.FENCED_LEADER_EPOCH
    return ErrorCode.UNKNOWN_LEADER_EPOCH
