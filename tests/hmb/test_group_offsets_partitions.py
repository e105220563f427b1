"""Committed offsets over several __consumer_offsets partitions (hmb.groups.offset_partitions).

A group's offsets go to partition ``abs(hashCode(group)) % partitions`` and
move with that partition's leadership: a broker that takes a partition over
reads its offsets back from the log, one that gives it up forgets them.
What would be wrong if this broke: a commit landing in another partition
than Kafka's, offsets still served after leadership moved away, offsets
lost when it comes back, a transaction's offsets not applied by its marker.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from hmb.groups.offset_partitions import (
    GroupOffsets,
    NotLoadedError,
    coordinator_partition,
    follow_leadership,
)
from hmb.groups.offsets import TOPIC, CommitEntry
from hmb.log.config import LogConfig
from hmb.log.manager import LogManager

PARTITIONS = 5


def _logs(tmp_path: Path) -> LogManager:
    logs = LogManager([tmp_path], LogConfig())
    logs.load()
    logs.create_topic(TOPIC, PARTITIONS, {"cleanup.policy": "compact"})
    return logs


def test_offsets_land_in_the_groups_partition_and_move_with_leadership(tmp_path: Path) -> None:
    logs = _logs(tmp_path)
    offsets = GroupOffsets(PARTITIONS)
    follow_leadership(offsets, logs, PARTITIONS, set(range(PARTITIONS)))
    groups = ["alpha", "beta", "gamma", "delta"]
    homes = {g: coordinator_partition(g, PARTITIONS) for g in groups}
    assert len(set(homes.values())) > 1  # the groups really are spread

    async def commit_all() -> None:
        for i, g in enumerate(groups):
            await offsets.commit(g, [CommitEntry("t", 0, 10 + i)])

    trio.run(commit_all)
    for p in range(PARTITIONS):  # each record went to its group's partition only
        plog = logs.get(TOPIC, p)
        assert plog is not None
        assert plog.log_end_offset == sum(1 for h in homes.values() if h == p)

    moved = homes["alpha"]
    follow_leadership(offsets, logs, PARTITIONS, set(range(PARTITIONS)) - {moved})  # led elsewhere now
    assert offsets.get("alpha", "t", 0) is None and "alpha" not in offsets.groups()
    with pytest.raises(NotLoadedError):
        trio.run(offsets.commit, "alpha", [CommitEntry("t", 0, 99)])
    kept = [g for g in groups if homes[g] != moved]
    assert all(offsets.get(g, "t", 0) is not None for g in kept)

    follow_leadership(offsets, logs, PARTITIONS, set(range(PARTITIONS)))  # and back: read from its log
    assert [offsets.get(g, "t", 0).offset for g in groups] == [10, 11, 12, 13]  # type: ignore[union-attr]


def test_a_transactions_offsets_wait_for_its_marker(tmp_path: Path) -> None:
    logs = _logs(tmp_path)
    offsets = GroupOffsets(PARTITIONS)
    follow_leadership(offsets, logs, PARTITIONS, set(range(PARTITIONS)))
    trio.run(offsets.stage_transaction, 7, 0, "beta", [CommitEntry("t", 1, 42)])
    assert offsets.pending("beta", "t", 1) and offsets.get("beta", "t", 1) is None
    offsets.complete_transaction(7, commit=True)
    assert offsets.get("beta", "t", 1).offset == 42  # type: ignore[union-attr]
    assert not offsets.pending("beta", "t", 1)
