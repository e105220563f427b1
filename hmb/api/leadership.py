"""Whether this broker may serve a partition's records (only its leader may) or a group
(only its coordinator may), in a cluster.

Alone, the broker leads every partition it has.  In a cluster a Produce,
Fetch, ListOffsets, DeleteRecords or DescribeProducers for a partition of a topic the cluster knows, that
another broker leads (or that has no leader now), is answered
NOT_LEADER_OR_FOLLOWER: the client refreshes its Metadata and goes to the
leader.  A partition the cluster does not know stays UNKNOWN_TOPIC_OR_PARTITION.
A broker cut off from ZooKeeper leads nothing until it has read a fresh view
(:meth:`hmb.cluster.node.ClusterNode.leads`): another may have been elected.

A group's JoinGroup, SyncGroup, Heartbeat or LeaveGroup on a broker that is
not its coordinator (the leader of the group's ``__consumer_offsets``
partition) is NOT_COORDINATOR: the client asks FindCoordinator again.
"""

from __future__ import annotations

from hmb.api.context import RequestContext


def misdirected(ctx: RequestContext, topic: str, partition: int) -> bool:
    """True when a cluster knows ``topic`` and this broker does not lead ``partition`` of it."""
    cluster = ctx.services.cluster
    if cluster is None:
        return False
    return topic in cluster.view.topics and not cluster.leads(topic, partition)


def not_coordinator(ctx: RequestContext, group_id: str) -> bool:
    """True when in a cluster another broker (or none, for now) coordinates ``group_id``."""
    cluster = ctx.services.cluster
    if cluster is None:
        return False
    from hmb.api.cluster_metadata import coordinator

    return coordinator(cluster, group_id) != cluster.broker_id
