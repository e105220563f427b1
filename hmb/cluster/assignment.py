"""Replica placement: which brokers hold each partition of a new topic, as Kafka places them.

Kafka's rules (the ZooKeeper-era admin placement, kept by its KRaft
controller), so a topic made on hmb is laid out as the same request would be
on Kafka:

* Rack-unaware: the partitions' first replicas (their preferred leaders)
  go round the sorted broker list from a random start, so leaders spread
  evenly; the other replicas follow the first at a shift that grows by one
  every time the partitions have gone once round the brokers, so that the
  followers of one broker's partitions are spread too.
* Rack-aware (every broker has ``broker.rack``): the same walk over a list
  that alternates racks (rack A's first broker, rack B's first, ..., rack A's
  second, ...), and a follower is skipped while its rack, or the broker
  itself, already holds a replica of the partition and racks or brokers
  without one remain.  Mixing brokers with and without a rack is refused,
  as Kafka refuses it.

Pure functions: the caller gives the live brokers and the random start.
"""

from __future__ import annotations

import random
from collections.abc import Mapping


class PlacementError(ValueError):
    """The topic cannot be placed on these brokers (too few, or racks mixed with none)."""


def _replica_index(first: int, shift: int, j: int, n: int) -> int:
    """The index of the (j+2)-th replica of a partition whose first is at ``first``."""
    step = 1 + (shift + j) % (n - 1)
    return (first + step) % n


def _rack_alternated(racks: Mapping[int, str]) -> list[int]:
    """The brokers ordered so that consecutive ones are on different racks where possible."""
    by_rack: dict[str, list[int]] = {}
    for broker, rack in sorted(racks.items()):
        by_rack.setdefault(rack, []).append(broker)
    queues = [by_rack[r] for r in sorted(by_rack)]
    out: list[int] = []
    depth = 0
    while len(out) < len(racks):
        for q in queues:
            if depth < len(q):
                out.append(q[depth])
        depth += 1
    return out


def assign_replicas(
    brokers: Mapping[int, str | None],
    partitions: int,
    replication_factor: int,
    *,
    start: int | None = None,
    shift: int | None = None,
    rng: random.Random | None = None,
) -> dict[int, tuple[int, ...]]:
    """Partition -> replicas for a new topic over ``brokers`` (id -> rack or None)."""
    n = len(brokers)
    if partitions <= 0:
        raise PlacementError("number of partitions must be larger than 0")
    if replication_factor <= 0:
        raise PlacementError("replication factor must be larger than 0")
    if replication_factor > n:
        raise PlacementError(f"Replication factor: {replication_factor} larger than available brokers: {n}.")
    rng = rng or random.Random()
    start = rng.randrange(n) if start is None else start
    shift = rng.randrange(n) if shift is None else shift
    racked = {b: r for b, r in brokers.items() if r is not None}
    if racked and len(racked) != n:
        raise PlacementError("Not all brokers have rack information for replica rack aware assignment.")
    if racked:
        return _rack_aware(racked, partitions, replication_factor, start, shift)
    order = sorted(brokers)
    out: dict[int, tuple[int, ...]] = {}
    for p in range(partitions):
        if p > 0 and p % n == 0:
            shift += 1
        first = (p + start) % n
        out[p] = (
            order[first],
            *(order[_replica_index(first, shift, j, n)] for j in range(replication_factor - 1)),
        )
    return out


def _rack_aware(
    racks: Mapping[int, str], partitions: int, replication_factor: int, start: int, shift: int
) -> dict[int, tuple[int, ...]]:
    order = _rack_alternated(racks)
    n = len(order)
    rack_count = len(set(racks.values()))
    out: dict[int, tuple[int, ...]] = {}
    for p in range(partitions):
        if p > 0 and p % n == 0:
            shift += 1
        first = (p + start) % n
        leader = order[first]
        replicas = [leader]
        racks_used = {racks[leader]}
        k = 0
        for _ in range(replication_factor - 1):
            while True:
                broker = order[_replica_index(first, shift * rack_count, k, n)]
                k += 1
                rack_ok = racks[broker] not in racks_used or len(racks_used) == rack_count
                broker_ok = broker not in replicas or len(replicas) == rack_count
                if rack_ok and broker_ok:
                    replicas.append(broker)
                    racks_used.add(racks[broker])
                    break
        out[p] = tuple(replicas)
    return out
