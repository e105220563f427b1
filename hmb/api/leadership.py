"""Whether this broker may serve a partition's records: in a cluster, only its leader may.

Alone, the broker leads every partition it has.  In a cluster a Produce,
Fetch, ListOffsets, DeleteRecords or DescribeProducers for a partition of a topic the cluster knows, that
another broker leads (or that has no leader now), is answered
NOT_LEADER_OR_FOLLOWER: the client refreshes its Metadata and goes to the
leader.  A partition the cluster does not know stays UNKNOWN_TOPIC_OR_PARTITION.
"""

from __future__ import annotations

from hmb.api.context import RequestContext


def misdirected(ctx: RequestContext, topic: str, partition: int) -> bool:
    """True when a cluster knows ``topic`` and this broker does not lead ``partition`` of it."""
    cluster = ctx.services.cluster
    if cluster is None:
        return False
    return topic in cluster.view.topics and not cluster.leads(topic, partition)
