"""Each local replica's role, from each view: leader, follower of a broker, or idle.

Rules:

* The state znode decides: the broker it names leads, in its leader epoch;
  every other live replica in the assignment follows that broker.  A broker
  that is not in a partition's assignment does nothing with it.
* Becoming leader (a new epoch): the epoch begins at the log end
  (leader-epoch-checkpoint) and stamps every append; the high watermark is
  held where it was (for a replica just started: its
  ``replication-offset-checkpoint`` value, else the log start) and moves
  only by :class:`LeaderState`'s rule, after each append (the log's
  ``on_leader_append``) and each follower fetch.
* Becoming follower (a new leader or epoch): the high watermark is held, the
  partition joins the fetcher of its leader broker, which first truncates
  the divergent tail (OffsetForLeaderEpoch) and then copies.
* Fetchers are trio tasks in this object's nursery: one per leader broker,
  started when it gets its first partition and stopped when it has none.
* ISR: a task checks the leaderships every ``replica.lag.time.max.ms / 2``
  (and at once when a follower catches up or a broker comes or goes) and
  writes shrinks and expansions with :func:`hmb.replication.isr.write_isr`;
  a follower whose broker is no longer registered leaves the ISR at once.
* The high watermarks are checkpointed per log dir every
  ``replica.high.watermark.checkpoint.interval.ms`` and at a clean shutdown
  (:mod:`hmb.log.hw_checkpoint`); a partition whose high watermark is not
  known yet keeps its checkpointed line.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import trio

from hmb.cluster.layout import NO_LEADER, PartitionState
from hmb.cluster.view import ClusterView
from hmb.log import hw_checkpoint
from hmb.replication.isr import write_isr
from hmb.replication.leader_state import LeaderState

if TYPE_CHECKING:
    from hmb.cluster.node import ClusterNode
    from hmb.log.partition import PartitionLog
    from hmb.replication.fetcher import LeaderFetcher

log = logging.getLogger(__name__)

TP = tuple[str, int]


@dataclass
class Following:
    """A partition this broker follows: the leader's epoch, and whether its tail is checked yet."""

    leader: int
    epoch: int
    truncated: bool = False


class Replication:
    """The replicas of one broker in a cluster."""

    def __init__(self, node: ClusterNode) -> None:
        self.node = node
        self.me = node.broker_id
        self.leaders: dict[TP, LeaderState] = {}
        self.states: dict[TP, PartitionState] = {}  # the state znode each leadership last saw or wrote
        self.following: dict[TP, Following] = {}
        self.fetchers: dict[int, LeaderFetcher] = {}
        self._nursery: trio.Nursery | None = None
        self._isr_check = trio.Event()
        self._live: set[int] = set()  # the registered brokers of the last view
        #: the high watermarks read from replication-offset-checkpoint when replication started
        self.checkpointed: dict[TP, int] = {}

    @property
    def lag_s(self) -> float:
        return self.node.config.replica_lag_time_max_ms / 1000

    # ------------------------------------------------------------ the tasks

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        self.checkpointed = await trio.to_thread.run_sync(hw_checkpoint.read_all, self.node.logs.log_dirs)
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                nursery.start_soon(self._checkpoint_periodically)
                task_status.started()
                await self._maintain_isr()
        finally:
            # stopping: a view step that was still running (a ZooKeeper call in a worker
            # thread finishes before the cancellation shows) must start no fetcher now
            self._nursery = None

    async def _checkpoint_periodically(self) -> None:
        interval_s = self.node.config.replica_high_watermark_checkpoint_interval_ms / 1000
        while True:
            await trio.sleep(interval_s)
            rows = self.checkpoint_rows()
            try:
                await trio.to_thread.run_sync(self._write_checkpoints, rows)
            except OSError as exc:  # a full or failing disk: tried again at the next interval
                log.warning("replication-offset-checkpoint not written: %s", exc)

    def checkpoint_rows(self) -> dict[Path, list[tuple[str, int, int]]]:
        """Each log dir's (topic, partition, high watermark): known ones, else the checkpointed."""
        rows: dict[Path, list[tuple[str, int, int]]] = {d: [] for d in self.node.logs.log_dirs}
        for topic, logs in self.node.logs.topics.items():
            for plog in logs:
                if plog.high_watermark_known:
                    hw = plog.high_watermark
                elif (topic, plog.partition) in self.checkpointed:
                    hw = self.checkpointed[(topic, plog.partition)]
                else:
                    continue
                rows.setdefault(plog.directory.parent, []).append((topic, plog.partition, hw))
        return rows

    @staticmethod
    def _write_checkpoints(rows: dict[Path, list[tuple[str, int, int]]]) -> None:
        for log_dir, lines in rows.items():
            hw_checkpoint.write(log_dir, lines)

    def write_checkpoint(self) -> None:
        """Write every log dir's checkpoint now (blocking: a clean shutdown's last step)."""
        try:
            self._write_checkpoints(self.checkpoint_rows())
        except Exception as exc:  # never the reason a stop fails: the periodic one stands
            log.warning("replication-offset-checkpoint not written at shutdown: %s", exc)

    def _known_high_watermark(self, plog: PartitionLog) -> int:
        """Where a replica's high watermark starts when its role changes: where it was; for a
        replica that just started, its checkpointed value (within the log), else the log start:
        it rises as soon as the in-sync replicas are heard from, and never shows a record they
        might not hold."""
        if plog.high_watermark_known:
            return plog.high_watermark
        start = plog.log_start_offset
        saved = self.checkpointed.get((plog.topic, plog.partition))
        return start if saved is None else max(start, min(saved, plog.log_end_offset))

    async def _maintain_isr(self) -> None:
        while True:
            with trio.move_on_after(self.lag_s / 2):
                await self._isr_check.wait()
            self._isr_check = trio.Event()
            now = time.monotonic()
            live = self.node.view.brokers
            if not self.node.view_trusted():
                continue  # cut off from ZooKeeper: not leading now, nor writing ISRs
            for tp, leader in list(self.leaders.items()):
                isr = leader.shrunk(now, self.lag_s, live) or leader.expanded(live)
                state = self.states.get(tp)
                if isr is None or state is None or state.leader_epoch != leader.epoch:
                    continue
                try:
                    written = await self.node.session.run(write_isr, self.node.zk, tp[0], tp[1], state, isr)
                except Exception as exc:  # ZooKeeper away: tried again at the next check
                    log.warning("%s-%d: ISR %s not written: %s", tp[0], tp[1], list(isr), exc)
                    continue
                if written is None:
                    self.node.session.nudge()  # re-read: the next view decides again
                    continue
                if self.leaders.get(tp) is leader:
                    log.info("%s-%d: ISR %s -> %s", tp[0], tp[1], list(leader.isr), list(isr))
                    self.states[tp] = written
                    leader.isr = isr
                    self._advance(tp)

    # ------------------------------------------------------------ following the view

    async def apply(self, view: ClusterView) -> None:
        """Give every local replica the role ``view`` says (called after each view is read)."""
        seen: set[TP] = set()
        for (topic, p), state in view.states.items():
            assignment = view.topics.get(topic)
            replicas = tuple(assignment.partitions.get(p, ())) if assignment is not None else ()
            if self.me not in replicas or topic in view.deleting:
                continue
            plog = self.node.logs.get(topic, p)
            if plog is None:
                continue
            seen.add((topic, p))
            if state.leader == self.me:
                self._lead((topic, p), plog, state, replicas)
            elif state.leader != NO_LEADER and state.leader in view.brokers:
                self._follow((topic, p), plog, state)
            else:  # no leader (or one not registered yet): neither lead nor copy
                self._stop_leading((topic, p))
                self._stop_following((topic, p))
        for tp in set(self.leaders) - seen:
            self._stop_leading(tp)
        for tp in set(self.following) - seen:
            self._stop_following(tp)
        self._sync_fetchers(view.brokers)
        if set(view.brokers) != self._live:  # a broker came or went: the ISRs may change now
            self._live = set(view.brokers)
            self._isr_check.set()

    def _lead(self, tp: TP, plog: PartitionLog, state: PartitionState, replicas: tuple[int, ...]) -> None:
        current = self.leaders.get(tp)
        known = self.states.get(tp)
        if current is not None and current.epoch == state.leader_epoch:
            if known is None or state.zk_version > known.zk_version:  # an ISR written by another
                self.states[tp] = state
                current.take_isr(state.isr)
                self._advance(tp)  # the controller dropped a dead follower: the HW may move now
            return
        self._stop_following(tp)
        plog.lead(state.leader_epoch)
        leader = LeaderState.begin(
            self.me,
            state.leader_epoch,
            replicas,
            state.isr,
            plog.log_end_offset,
            self._known_high_watermark(plog),
            time.monotonic(),
        )
        self.leaders[tp] = leader
        self.states[tp] = state
        plog.set_high_watermark(leader.high_watermark)
        plog.on_leader_append = functools.partial(self._advance, tp)
        self._advance(tp)
        log.info(
            "%s-%d: leader in epoch %d, ISR %s, high watermark %d",
            tp[0],
            tp[1],
            state.leader_epoch,
            list(state.isr),
            plog.high_watermark,
        )

    def _stop_leading(self, tp: TP) -> None:
        self.leaders.pop(tp, None)
        self.states.pop(tp, None)
        plog = self.node.logs.get(*tp)
        if plog is not None:
            plog.on_leader_append = None

    def _follow(self, tp: TP, plog: PartitionLog, state: PartitionState) -> None:
        current = self.following.get(tp)
        if current is not None and (current.leader, current.epoch) == (state.leader, state.leader_epoch):
            return
        if tp in self.leaders:
            self._stop_leading(tp)
        plog.set_high_watermark(self._known_high_watermark(plog))
        if current is not None and current.leader in self.fetchers:
            self.fetchers[current.leader].partitions.pop(tp, None)
        self.following[tp] = Following(state.leader, state.leader_epoch)
        log.info("%s-%d: follower of broker %d in epoch %d", tp[0], tp[1], state.leader, state.leader_epoch)

    def _stop_following(self, tp: TP) -> None:
        current = self.following.pop(tp, None)
        if current is not None and current.leader in self.fetchers:
            self.fetchers[current.leader].partitions.pop(tp, None)

    def _sync_fetchers(self, brokers: Mapping[int, object]) -> None:
        from hmb.replication.fetcher import LeaderFetcher

        wanted: dict[int, dict[TP, Following]] = {}
        for tp, f in self.following.items():
            wanted.setdefault(f.leader, {})[tp] = f
        for leader, fetcher in list(self.fetchers.items()):
            if leader not in wanted:
                fetcher.stop()
                del self.fetchers[leader]
        for leader, partitions in wanted.items():
            running = self.fetchers.get(leader)
            if running is None:
                if self._nursery is None:
                    continue
                running = self.fetchers[leader] = LeaderFetcher(self, leader)
                self._nursery.start_soon(running.run)
            running.partitions = partitions
            running.changed()

    # ------------------------------------------------------------ for the request handlers

    def _advance(self, tp: TP) -> None:
        leader = self.leaders.get(tp)
        plog = self.node.logs.get(*tp)
        if leader is None or plog is None:
            return
        plog.set_high_watermark(leader.advance(plog.log_end_offset))

    def follower_fetched(self, topic: str, partition: int, replica: int, fetch_offset: int) -> None:
        """A Fetch from follower ``replica`` at ``fetch_offset`` reached this leader."""
        tp = (topic, partition)
        leader = self.leaders.get(tp)
        plog = self.node.logs.get(topic, partition)
        if leader is None or plog is None or fetch_offset > plog.log_end_offset:
            return  # past the log end: a diverged copy, answered OFFSET_OUT_OF_RANGE, says nothing
        leader.fetched(replica, fetch_offset, plog.log_end_offset, time.monotonic())
        self._advance(tp)
        if replica not in leader.isr and leader.expanded(self.node.view.brokers) is not None:
            self._isr_check.set()

    def isr_size(self, topic: str, partition: int) -> int | None:
        """How many replicas are in sync for a partition this broker leads (None: it does not)."""
        leader = self.leaders.get((topic, partition))
        return None if leader is None else len(leader.isr)
