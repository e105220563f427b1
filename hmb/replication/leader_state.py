"""What the leader of one partition knows of its followers, and the rules it draws from it.

Pure: no I/O, no clock of its own (times are passed in, monotonic seconds),
so the rules are tested in-process.

==========================  ===================================================================
rule                        as Kafka's ``Partition``/``Replica``
==========================  ===================================================================
a follower's log end        the offset it fetches from (it holds everything before)
caught up                   its fetch offset reached the leader's log end as it was at the
                            follower's previous fetch: it was caught up at that fetch's time
                            (at this fetch's time when it reached the current log end)
high watermark              the smallest log end over the ISR (the leader's own included);
                            it never moves back
ISR shrink                  a follower not caught up for ``replica.lag.time.max.ms``, or
                            whose broker is no longer registered (at once: Kafka's
                            controller drops a dead broker from the ISR)
ISR expand                  a follower outside the ISR, of a registered broker, whose log end
                            reached the high watermark (and the start of the leader's epoch)
                            at a fetch after it left the ISR: one the controller dropped
                            (its broker shutting down) must fetch again first
==========================  ===================================================================
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

UNKNOWN = -1  # a follower's log end before its first fetch to this leader


@dataclass(slots=True)
class Follower:
    log_end: int = UNKNOWN
    caught_up_at: float = 0.0
    #: the leader's log end and the time at the follower's previous fetch
    last_fetch_leader_end: int = UNKNOWN
    last_fetch_at: float = 0.0


@dataclass
class LeaderState:
    """One partition this broker leads, in ``epoch``, with ``replicas`` (itself included)."""

    me: int
    epoch: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    epoch_start: int  # the leader's log end when it began to lead (an expanded ISR must reach it)
    high_watermark: int
    followers: dict[int, Follower] = field(default_factory=dict)

    @classmethod
    def begin(
        cls,
        me: int,
        epoch: int,
        replicas: tuple[int, ...],
        isr: tuple[int, ...],
        log_end: int,
        high_watermark: int,
        now: float,
    ) -> LeaderState:
        """A new leadership: every follower counts as caught up now (as Kafka's new leader)."""
        followers = {b: Follower(caught_up_at=now) for b in replicas if b != me}
        return cls(me, epoch, tuple(replicas), tuple(isr), log_end, min(high_watermark, log_end), followers)

    def fetched(self, replica: int, fetch_offset: int, leader_end: int, now: float) -> None:
        """``replica`` fetched from ``fetch_offset`` while the leader's log ended at ``leader_end``."""
        f = self.followers.get(replica)
        if f is None:
            return
        f.log_end = min(fetch_offset, leader_end)
        if fetch_offset >= leader_end:
            f.caught_up_at = now
        elif f.last_fetch_leader_end != UNKNOWN and fetch_offset >= f.last_fetch_leader_end:
            f.caught_up_at = max(f.caught_up_at, f.last_fetch_at)
        f.last_fetch_leader_end, f.last_fetch_at = leader_end, now

    def advance(self, leader_end: int) -> int:
        """The high watermark after what is known now (it never moves back); returns it."""
        ends = [leader_end] + [
            self.followers[b].log_end for b in self.isr if b != self.me and b in self.followers
        ]
        candidate = min(ends)
        if candidate > self.high_watermark:
            self.high_watermark = candidate
        return self.high_watermark

    def shrunk(self, now: float, lag_s: float, live: Collection[int] | None = None) -> tuple[int, ...] | None:
        """The ISR without the followers not caught up for ``lag_s``, and without those whose
        broker is not ``live`` (its ZooKeeper session ended); None: nothing to drop."""
        keep = tuple(
            b
            for b in self.isr
            if b == self.me
            or (
                b in self.followers
                and now - self.followers[b].caught_up_at <= lag_s
                and (live is None or b in live)
            )
        )
        return keep if keep != self.isr else None

    def take_isr(self, isr: tuple[int, ...]) -> None:
        """Another writer (the controller) set the ISR: who it dropped must fetch again before
        rejoining (a broker shutting down has stopped fetching, and must stay out)."""
        for b in self.isr:
            if b not in isr and b in self.followers:
                self.followers[b] = Follower(caught_up_at=self.followers[b].caught_up_at)
        self.isr = tuple(isr)

    def expanded(self, live: Collection[int] | None = None) -> tuple[int, ...] | None:
        """The ISR with the followers that caught up to the high watermark, of brokers still
        ``live`` (registered); None: none did."""
        joining = [
            b
            for b, f in self.followers.items()
            if b not in self.isr
            and (live is None or b in live)
            and f.log_end >= self.high_watermark
            and f.log_end >= self.epoch_start
            and f.log_end != UNKNOWN
        ]
        if not joining:
            return None
        return tuple(b for b in self.replicas if b in self.isr or b in joining)
