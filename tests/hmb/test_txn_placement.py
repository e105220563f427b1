"""Transactional ids over several ``__transaction_state`` partitions, following leadership.

A transactional id's state goes to partition ``abs(hashCode(id)) % partitions``
(Kafka's placement); the coordinator serves only the ids of the partitions it
leads (:func:`hmb.txn.leadership.follow_leadership`), reads a partition back
when it takes it over, completes what was left in Prepare*, and forgets it
when leadership leaves.  What would be wrong if this broke: a state record in
another partition than Kafka's, an id served by two coordinators, a
transaction left half committed after a coordinator moved, markers not tried
again after a leader change.
"""

from __future__ import annotations

from pathlib import Path

import trio

from hmb.clock import Clock
from hmb.groups.offset_partitions import GroupOffsets, coordinator_partition
from hmb.log.config import LogConfig
from hmb.log.manager import LogManager
from hmb.txn.coordinator import TransactionCoordinator
from hmb.txn.leadership import follow_leadership
from hmb.txn.state_log import TOPIC, TOPIC_CONFIG, TransactionStateLog
from hmb.txn.states import TxnState
from kproto import ErrorCode

PARTITIONS = 5
TIDS = ["alpha", "beta", "gamma", "delta", "epsilon"]
TP = tuple[str, int]


class Leaders:
    """Stands for the partitions' leaders: marks what it is told to unless told to fail first."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, int, bool, int, list[TP]]] = []
        self.failing: set[TP] = set()

    async def send(self, pid: int, epoch: int, commit: bool, coord_epoch: int, tps: list[TP]) -> list[TP]:
        self.calls.append((pid, epoch, commit, coord_epoch, list(tps)))
        return [tp for tp in tps if tp in self.failing]


def _coordinator(tmp_path: Path) -> tuple[LogManager, TransactionCoordinator, Leaders]:
    logs = LogManager([tmp_path], LogConfig())
    logs.load()
    logs.create_topic(TOPIC, PARTITIONS, TOPIC_CONFIG)
    logs.create_topic("t", 2, {})
    clock = Clock()
    coordinator = TransactionCoordinator(
        logs,
        GroupOffsets(1, clock.wall_ms),
        TransactionStateLog(logs, clock.wall_ms),
        clock,
        max_timeout_ms=900_000,
        id_expiration_ms=604_800_000,
    )
    coordinator.coordinated = set()  # in a cluster: nothing until leadership says so
    leaders = Leaders()
    coordinator.send_markers = leaders.send
    return logs, coordinator, leaders


def test_state_lands_in_the_ids_partition_and_only_led_ids_are_served(tmp_path: Path) -> None:
    logs, coordinator, _ = _coordinator(tmp_path)
    homes = {tid: coordinator_partition(tid, PARTITIONS) for tid in TIDS}
    assert len(set(homes.values())) > 1  # the ids really are spread
    assert trio.run(coordinator.init_producer_id, "alpha", 60_000).error == ErrorCode.NOT_COORDINATOR

    follow_leadership(coordinator, PARTITIONS, dict.fromkeys(range(PARTITIONS), 7))
    results = {tid: trio.run(coordinator.init_producer_id, tid, 60_000) for tid in TIDS}
    assert all(r.error == ErrorCode.NONE for r in results.values())
    assert len({r.producer_id for r in results.values()}) == len(TIDS)
    for p in range(PARTITIONS):  # each id's record went to its own partition only
        plog = logs.get(TOPIC, p)
        assert plog is not None
        assert plog.log_end_offset == sum(1 for h in homes.values() if h == p)

    moved = homes["alpha"]
    follow_leadership(coordinator, PARTITIONS, {p: 7 for p in range(PARTITIONS) if p != moved})
    alpha = results["alpha"]
    assert coordinator.describe("alpha") is None
    code = trio.run(coordinator.add_partitions, "alpha", alpha.producer_id, alpha.producer_epoch, [("t", 0)])
    assert code == ErrorCode.NOT_COORDINATOR
    assert trio.run(coordinator.init_producer_id, "alpha", 60_000).error == ErrorCode.NOT_COORDINATOR

    follow_leadership(coordinator, PARTITIONS, dict.fromkeys(range(PARTITIONS), 8))  # back: read again
    meta = coordinator.describe("alpha")
    assert meta is not None and (meta.producer_id, meta.producer_epoch) == (alpha.producer_id, 0)


def test_a_taken_over_prepare_commit_is_completed_with_markers_tried_again(tmp_path: Path) -> None:
    logs, first, leaders = _coordinator(tmp_path)
    home = coordinator_partition("alpha", PARTITIONS)
    follow_leadership(first, PARTITIONS, {home: 3})

    async def begin_and_commit() -> int:
        init = await first.init_producer_id("alpha", 60_000)
        code = await first.add_partitions("alpha", init.producer_id, 0, [("t", 0), ("t", 1)])
        assert code == ErrorCode.NONE
        leaders.failing = {("t", 1)}  # that partition's leader is moving: the marker fails
        return await first.end_transaction("alpha", init.producer_id, 0, True)

    assert trio.run(begin_and_commit) == ErrorCode.NONE
    meta = first.describe("alpha")
    assert meta is not None and meta.state is TxnState.PREPARE_COMMIT  # waits for the other marker
    assert leaders.calls[-1][1:] == (0, True, 3, [("t", 0), ("t", 1)])

    # the coordinator's broker goes; another takes the state partition over and reads it back
    clock = Clock()
    second = TransactionCoordinator(
        logs,
        GroupOffsets(1, clock.wall_ms),
        TransactionStateLog(logs, clock.wall_ms),
        clock,
        max_timeout_ms=900_000,
        id_expiration_ms=604_800_000,
    )
    second.coordinated = set()
    later = Leaders()
    second.send_markers = later.send
    follow_leadership(second, PARTITIONS, {home: 4})
    taken = second.describe("alpha")
    assert taken is not None and taken.state is TxnState.PREPARE_COMMIT
    assert trio.run(second.expire) is False  # the timer's pass completes it: both markers now
    assert later.calls == [(taken.producer_id, 0, True, 4, [("t", 0), ("t", 1)])]
    assert taken.state is TxnState.COMPLETE_COMMIT
    reread = TransactionStateLog(logs, clock.wall_ms).load(home)["alpha"]
    assert reread.state is TxnState.COMPLETE_COMMIT  # logged, not only in memory


def test_markers_already_written_are_not_sent_again(tmp_path: Path) -> None:
    _, coordinator, leaders = _coordinator(tmp_path)
    follow_leadership(coordinator, PARTITIONS, dict.fromkeys(range(PARTITIONS), 0))

    async def commit() -> None:
        init = await coordinator.init_producer_id("beta", 60_000)
        await coordinator.add_partitions("beta", init.producer_id, 0, [("t", 0), ("t", 1)])
        leaders.failing = {("t", 1)}
        await coordinator.end_transaction("beta", init.producer_id, 0, False)
        leaders.failing = set()
        assert await coordinator.expire() is False

    trio.run(commit)
    assert [c[4] for c in leaders.calls] == [[("t", 0), ("t", 1)], [("t", 1)]]
    meta = coordinator.describe("beta")
    assert meta is not None and meta.state is TxnState.COMPLETE_ABORT
