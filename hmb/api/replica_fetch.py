"""A follower's Fetch at its leader: who the follower is, and what its fetch tells the leader.

A Fetch with ``replica_id`` >= 0 (before v15) or ``replica_state.replica_id``
>= 0 (v15+, KIP-903) comes from another broker's replica, in a cluster only.
Its fetch offset is that follower's log end: the leader records it
(:meth:`hmb.replication.roles.Replication.follower_fetched`), which may move
the high watermark and the ISR.  Alone, or from a consumer (-1), it is an
ordinary fetch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from hmb.api.context import RequestContext

if TYPE_CHECKING:
    from hmb.replication.roles import Replication


class FollowerFetch(NamedTuple):
    replication: Replication
    replica: int

    def fetched(self, topic: str, partition: int, fetch_offset: int) -> None:
        self.replication.follower_fetched(topic, partition, self.replica, fetch_offset)


def replica_id(ctx: RequestContext) -> int:
    """The replica id a Fetch names (-1: a consumer)."""
    body = ctx.request.body
    if ctx.request.version >= 15:
        state = getattr(body, "replica_state", None)
        return -1 if state is None else int(state.replica_id)
    return int(getattr(body, "replica_id", -1))


def replica_of(ctx: RequestContext) -> FollowerFetch | None:
    """The follower a Fetch comes from, in a cluster; None for a consumer or alone."""
    cluster = ctx.services.cluster
    if cluster is None:
        return None
    replica = replica_id(ctx)
    return None if replica < 0 else FollowerFetch(cluster.replication, replica)
