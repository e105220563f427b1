"""The leader's rules for its followers (hmb.replication.leader_state): the high watermark is
the ISR's smallest log end and never moves back; a follower is caught up when it reached the
leader's log end; the ISR shrinks after the lag time and expands at the high watermark."""

from __future__ import annotations

from hmb.replication.leader_state import LeaderState

LAG = 10.0


def leader(isr: tuple[int, ...] = (1, 2, 3), log_end: int = 100, hw: int = 90) -> LeaderState:
    return LeaderState.begin(1, 4, (1, 2, 3), isr, log_end, hw, now=0.0)


def test_high_watermark_is_the_isr_minimum_and_never_moves_back() -> None:
    state = leader()
    assert state.advance(100) == 90, "no follower has fetched yet: held where it was"
    state.fetched(2, 100, 100, now=1.0)
    assert state.advance(100) == 90, "follower 3 is in the ISR and unknown"
    state.fetched(3, 95, 100, now=1.0)
    assert state.advance(100) == 95
    state.fetched(3, 92, 100, now=2.0)  # a follower that went back (truncated) does not pull it back
    assert state.advance(100) == 95
    state.isr = (1, 2)  # 3 left the ISR: the others decide
    assert state.advance(100) == 100
    assert state.advance(120) == 100, "a leader append alone does not pass the followers"


def test_alone_in_the_isr_the_high_watermark_is_the_log_end() -> None:
    state = leader(isr=(1,))
    assert state.advance(100) == 100
    assert state.advance(130) == 130


def test_shrink_drops_followers_not_caught_up_within_the_lag() -> None:
    state = leader()
    assert state.shrunk(now=LAG, lag_s=LAG) is None, "new leaders count everyone caught up at the start"
    state.fetched(2, 100, 100, now=8.0)  # caught up at 8
    state.fetched(3, 50, 100, now=8.0)  # behind
    assert state.shrunk(now=LAG + 1, lag_s=LAG) == (1, 2)
    # Kafka's rule: reaching the leader's log end of the previous fetch counts from that fetch
    state.fetched(3, 100, 130, now=LAG + 2)
    assert state.followers[3].caught_up_at == 8.0
    state.fetched(3, 130, 150, now=LAG + 3)
    assert state.followers[3].caught_up_at == LAG + 2
    assert state.shrunk(now=LAG + 3, lag_s=LAG) is None


def test_expand_takes_back_a_follower_at_the_high_watermark() -> None:
    state = leader(isr=(1, 2))
    state.fetched(2, 100, 100, now=1.0)
    assert state.advance(100) == 100
    state.fetched(3, 99, 100, now=1.0)
    assert state.expanded() is None, "below the high watermark"
    state.fetched(3, 100, 100, now=2.0)
    assert state.expanded() == (1, 2, 3), "in replica order"


def test_expand_needs_the_start_of_the_leaders_epoch() -> None:
    state = LeaderState.begin(1, 4, (1, 2), (1,), log_end=100, high_watermark=40, now=0.0)
    state.high_watermark = 40
    state.fetched(2, 60, 100, now=1.0)
    assert state.expanded() is None, "it has not reached where this leadership began"
    state.fetched(2, 100, 100, now=2.0)
    assert state.expanded() == (1, 2)


def test_a_follower_whose_broker_is_gone_leaves_at_once() -> None:
    state = leader()
    state.fetched(2, 100, 100, now=1.0)
    state.fetched(3, 100, 100, now=1.0)
    assert state.shrunk(now=2.0, lag_s=LAG, live={1, 2, 3}) is None
    assert state.shrunk(now=2.0, lag_s=LAG, live={1, 2}) == (1, 2), "3's session ended"


def test_a_follower_the_controller_dropped_rejoins_only_after_fetching_again() -> None:
    state = leader()
    state.fetched(2, 100, 100, now=1.0)
    state.fetched(3, 100, 100, now=1.0)
    state.take_isr((1, 2))  # controlled shutdown of broker 3: the controller wrote the ISR
    assert state.isr == (1, 2)
    assert state.expanded() is None, "its fetch before the drop does not bring it back"
    assert state.advance(100) == 100, "the smaller ISR moves the high watermark"
    state.fetched(3, 100, 100, now=2.0)
    assert state.expanded(live={1, 2}) is None, "nor does a fetch once its broker is gone"
    assert state.expanded(live={1, 2, 3}) == (1, 2, 3)
