"""Requests one broker of a cluster sends another over the Kafka protocol.

Kept apart from :mod:`hmb.cluster`, which knows ZooKeeper and no request:
the cluster decides when to ask, this package knows how to ask.
"""
