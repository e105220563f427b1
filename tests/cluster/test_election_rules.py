"""The controller's election rules (hmb.cluster.elections) over hand-made views, without ZooKeeper.

Each test states one row of the decision table with replicas on three
brokers, so the rules are checked for replication factor 3 even while a
cluster refuses such topics: what would be wrong if a rule broke is a
leader outside the ISR, a shutting-down broker chosen, an epoch not bumped,
or an election run that Kafka refuses.
"""

from __future__ import annotations

from hmb.cluster.elections import Electorate, Outcome, failover, imbalanced, preferred, unclean
from hmb.cluster.layout import NO_LEADER, BrokerRegistration, Endpoint, PartitionState, TopicAssignment
from hmb.cluster.view import ClusterView

EPOCH = 9  # the controller's epoch, written into every state it decides


def view(live: tuple[int, ...], leaders: dict[int, tuple[int, tuple[int, ...]]] | None = None) -> ClusterView:
    """Brokers ``live`` registered; topic t with partitions p -> replicas (p, p+1, p+2) % 3."""
    brokers = {b: BrokerRegistration(b, (Endpoint("PLAINTEXT", "h", 9000 + b, "PLAINTEXT"),)) for b in live}
    parts = {p: tuple((p + i) % 3 for i in range(3)) for p in range(3)}
    states = {("t", p): PartitionState(leader, 4, isr, 1) for p, (leader, isr) in (leaders or {}).items()}
    return ClusterView(brokers, live[0] if live else -1, 1, {"t": TopicAssignment(parts, "")}, states)


def state(leader: int, isr: tuple[int, ...]) -> PartitionState:
    return PartitionState(leader, 4, isr, 1)


REPLICAS = (0, 1, 2)
NOBODY = Electorate()


def test_a_live_leader_with_a_live_isr_stays() -> None:
    v = view((0, 1, 2))
    assert failover(v, "t", REPLICAS, state(0, (0, 1, 2)), EPOCH, NOBODY) is None


def test_a_dead_leader_is_replaced_by_the_first_live_isr_member_epoch_plus_one() -> None:
    v = view((1, 2))
    assert failover(v, "t", REPLICAS, state(0, (0, 2, 1)), EPOCH, NOBODY) == PartitionState(
        2, 5, (2, 1), EPOCH
    )


def test_a_dead_leader_with_no_live_isr_member_goes_offline_isr_kept() -> None:
    v = view((1, 2))
    assert failover(v, "t", REPLICAS, state(0, (0,)), EPOCH, NOBODY) == PartitionState(
        NO_LEADER, 5, (0,), EPOCH
    )
    # and stays so: nothing to write the second time
    assert failover(v, "t", REPLICAS, state(NO_LEADER, (0,)), EPOCH, NOBODY) is None


def test_an_offline_partition_gets_its_isr_member_back() -> None:
    v = view((0, 1))
    assert failover(v, "t", REPLICAS, state(NO_LEADER, (0,)), EPOCH, NOBODY) == PartitionState(
        0, 5, (0,), EPOCH
    )


def test_unclean_election_only_when_the_topic_allows_it() -> None:
    v = view((1, 2))
    allowed = Electorate(unclean_allowed=lambda topic: topic == "t")
    assert failover(v, "t", REPLICAS, state(0, (0,)), EPOCH, allowed) == PartitionState(1, 5, (1,), EPOCH)
    assert failover(v, "t", REPLICAS, state(0, (0,)), EPOCH, NOBODY).leader == NO_LEADER  # type: ignore[union-attr]


def test_controlled_shutdown_moves_leadership_to_another_isr_member() -> None:
    v = view((0, 1, 2))
    leaving = Electorate(frozenset({0}))
    assert failover(v, "t", REPLICAS, state(0, (0, 1, 2)), EPOCH, leaving) == PartitionState(
        1, 5, (1, 2), EPOCH
    )


def test_controlled_shutdown_takes_a_follower_out_of_the_isr_epoch_kept() -> None:
    v = view((0, 1, 2))
    leaving = Electorate(frozenset({2}))
    assert failover(v, "t", REPLICAS, state(0, (0, 1, 2)), EPOCH, leaving) == PartitionState(
        0, 4, (0, 1), EPOCH
    )


def test_controlled_shutdown_with_nobody_in_sync_keeps_the_leader() -> None:
    v = view((0, 1, 2))
    leaving = Electorate(frozenset({0}))
    assert failover(v, "t", REPLICAS, state(0, (0,)), EPOCH, leaving) is None  # it stays until it stops
    assert failover(v, "t", (0,), state(0, (0,)), EPOCH, leaving) is None  # one replica: the same
    gone = view((1, 2))  # once its registration is gone: offline, as any dead leader
    assert failover(gone, "t", (0,), state(0, (0,)), EPOCH, NOBODY).leader == NO_LEADER  # type: ignore[union-attr]


def test_a_shutting_down_broker_is_never_chosen() -> None:
    v = view((1, 2))
    leaving = Electorate(frozenset({1}))
    assert failover(v, "t", REPLICAS, state(0, (0, 1, 2)), EPOCH, leaving) == PartitionState(
        2, 5, (2,), EPOCH
    )


def test_preferred_election() -> None:
    v = view((0, 1, 2))
    assert preferred(v, REPLICAS, state(1, (1, 2, 0)), EPOCH, NOBODY) == (
        PartitionState(0, 5, (1, 2, 0), EPOCH),
        Outcome.ELECTED,
    )
    assert preferred(v, REPLICAS, state(0, (0, 1)), EPOCH, NOBODY) == (None, Outcome.NOT_NEEDED)
    not_in_sync = preferred(v, REPLICAS, state(1, (1, 2)), EPOCH, NOBODY)
    assert not_in_sync == (None, Outcome.PREFERRED_NOT_AVAILABLE)
    dead = preferred(view((1, 2)), REPLICAS, state(1, (1, 2, 0)), EPOCH, NOBODY)
    assert dead == (None, Outcome.PREFERRED_NOT_AVAILABLE)
    leaving = preferred(v, REPLICAS, state(1, (1, 2, 0)), EPOCH, Electorate(frozenset({0})))
    assert leaving == (None, Outcome.PREFERRED_NOT_AVAILABLE)


def test_unclean_election_asked_for() -> None:
    v = view((1, 2))
    assert unclean(v, REPLICAS, state(1, (1,)), EPOCH, NOBODY) == (None, Outcome.NOT_NEEDED)
    assert unclean(v, REPLICAS, state(NO_LEADER, (0, 2)), EPOCH, NOBODY) == (
        PartitionState(2, 5, (2,), EPOCH),
        Outcome.ELECTED,
    )
    assert unclean(v, REPLICAS, state(NO_LEADER, (0,)), EPOCH, NOBODY) == (
        PartitionState(1, 5, (1,), EPOCH),
        Outcome.ELECTED,
    )
    alone = unclean(view((1,)), (0,), state(NO_LEADER, (0,)), EPOCH, NOBODY)
    assert alone == (None, Outcome.NO_ELIGIBLE_LEADER)


def test_imbalance_is_kafkas_per_broker_percentage() -> None:
    # t-0 prefers 0, t-1 prefers 1, t-2 prefers 2; broker 0 leads all three
    v = view((0, 1, 2), {0: (0, (0, 1, 2)), 1: (0, (1, 2, 0)), 2: (0, (2, 0, 1))})
    assert imbalanced(v, 10) == [("t", 1), ("t", 2)]  # brokers 1 and 2: 100 % imbalanced
    balanced = view((0, 1, 2), {0: (0, (0,)), 1: (1, (1,)), 2: (2, (2,))})
    assert imbalanced(balanced, 10) == []
    assert imbalanced(view((0, 1), {0: (0, (0,)), 1: (0, (1, 0)), 2: (0, (0,))}), 10) == [
        ("t", 1)
    ]  # 2 is dead
    assert imbalanced(v, 100) == []  # 100 %: never above


def test_a_dead_follower_leaves_the_isr_epoch_kept() -> None:
    v = view((0, 2))
    assert failover(v, "t", REPLICAS, state(0, (0, 1, 2)), EPOCH, NOBODY) == PartitionState(
        0, 4, (0, 2), EPOCH
    )
