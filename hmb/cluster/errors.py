"""Why a broker cannot take its place in the cluster: said in one line by ``hmb serve``."""

from __future__ import annotations


class ClusterError(Exception):
    """The broker cannot join or stay in the cluster (ZooKeeper unreachable, its id taken,
    its log directories from another cluster); ``hmb serve`` prints it and exits with 1."""
