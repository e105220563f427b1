"""Replication of a cluster's partitions: leaders, followers, the ISR and the high watermark.

hmb.cluster says who leads what (ZooKeeper); this package makes the local
replicas act on it.  :mod:`.roles` turns each view into leaders and
followers; :mod:`.leader_state` is a leader's table of its followers (the
high watermark and ISR rules, pure); :mod:`.fetcher` is a follower's copy
loop, one per leader broker; :mod:`.isr` writes ISR changes to the state
znode; :mod:`.acks` is what an ``acks=all`` produce waits for.
"""
