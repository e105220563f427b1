"""The cluster tests' fixtures: one ZooKeeper per module (tests/support/zookeeper.py)."""

from zookeeper import zookeeper  # noqa: F401 - a fixture, used by name
