"""The transaction coordinator: Kafka's ``TransactionCoordinator`` for one broker.

Rules of this module:

* Every state change goes through the table of :mod:`hmb.txn.states` and is
  written to ``__transaction_state`` (:mod:`hmb.txn.state_log`) before it is
  acted on or acknowledged.
* Requests name a transactional id with the producer id and epoch the
  client holds.  An unknown id or another producer id is
  INVALID_PRODUCER_ID_MAPPING; an older epoch is PRODUCER_FENCED (a zombie:
  a newer instance has initialised the id, or the coordinator aborted its
  transaction); the handlers turn that into INVALID_PRODUCER_EPOCH for
  request versions older than the code.  While markers are being written
  the answer is CONCURRENT_TRANSACTIONS (the client retries).
* Ending a transaction (EndTxn, a fence, a timeout): Prepare* is logged,
  the COMMIT or ABORT markers are written to every partition of the
  transaction (this broker's own log: no WriteTxnMarkers round trip), the
  transaction's offsets become visible or are dropped
  (:class:`~hmb.groups.offset_partitions.GroupOffsets`), then Complete* is logged.
  Markers that cannot be written (a failing disk) are retried by the timer;
  the Prepare* state meanwhile keeps the id busy.
* A fence (InitProducerId while a transaction is open, or the transaction's
  ``transaction.timeout.ms`` passed on the broker's clock) bumps the epoch
  first and aborts under the bumped one, so the previous instance's late
  batches and requests are refused.
* On start the state log is read back: a transaction found in Prepare* is
  completed, one found open is aborted once its timeout has passed (the
  timer), an idle id left unused for ``transactional.id.expiration.ms`` is
  forgotten (a tombstone).
* Transaction version 2 (KIP-890 part 2; EndTxn v5+, Produce v12+,
  TxnOffsetCommit v5+): the broker adds a partition or a group's offsets
  to the transaction itself when the first write for it arrives
  (:meth:`add_partitions`, :meth:`add_offsets`), and every EndTxn bumps the
  epoch (:meth:`end_transaction_v2`), so each transaction is one (producer
  id, epoch) and a late batch or marker of the previous one is fenced.  The
  markers carry the bumped epoch; a retried EndTxn (the epoch before the
  bump) gets the same answer again.  When the epoch would reach its maximum
  the producer moves to a new producer id once the markers are written.
* Coordinator epoch: 0 alone (the coordinator never moves).
* In a cluster (:mod:`hmb.txn.leadership`) this broker coordinates the ids
  of the ``__transaction_state`` partitions it leads: a partition's ids are
  read back when it becomes their leader (:meth:`take_over`; what was in
  Prepare* is completed by the timer) and forgotten when leadership leaves
  (:meth:`give_up`); any other id is NOT_COORDINATOR.  Markers then go to
  each partition's leader as WriteTxnMarkers (:attr:`send_markers`), under
  the coordinator epoch of the state partition's leader epoch.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import trio

from hmb.clock import Clock
from hmb.log.errors import InvalidProducerEpochError, PartitionDeletedError
from hmb.txn.metadata import NO_TIMEOUT_MS, TransactionMetadata
from hmb.txn.state_log import TransactionStateLog
from hmb.txn.states import TxnEvent, TxnState
from kproto import ErrorCode

if TYPE_CHECKING:
    from hmb.groups.offset_partitions import GroupOffsets
    from hmb.log.manager import LogManager
    from hmb.txn.remote_adds import RemoteAdds

log = logging.getLogger(__name__)

COORDINATOR_EPOCH = 0
MAX_EPOCH = 2**15 - 1
#: how long a failed marker write waits before it is tried again
RETRY_S = 1.0
OFFSETS_TOPIC = "__consumer_offsets"


#: (producer id, epoch, commit, coordinator epoch, partitions) -> the partitions not marked
SendMarkers = Callable[[int, int, bool, int, list[tuple[str, int]]], Awaitable[list[tuple[str, int]]]]


@dataclass(frozen=True)
class InitResult:
    """The answer to one InitProducerId for a transactional id: an error, or the id and epoch."""

    error: int
    producer_id: int = -1
    producer_epoch: int = -1


@dataclass(frozen=True)
class EndResult:
    """EndTxn v5's answer: the code, and the producer id and epoch of the next transaction."""

    error: int
    producer_id: int = -1
    producer_epoch: int = -1


class TransactionCoordinator:
    """Every transactional id of the broker.  Run :meth:`run` in a nursery (timeouts, recovery)."""

    def __init__(
        self,
        logs: LogManager,
        offsets: GroupOffsets,
        state_log: TransactionStateLog,
        clock: Clock,
        *,
        max_timeout_ms: int,
        id_expiration_ms: int,
    ) -> None:
        self.logs = logs
        self.offsets = offsets
        self.state_log = state_log
        self.clock = clock
        self.max_timeout_ms = max_timeout_ms
        self.id_expiration_ms = id_expiration_ms
        self.transactions: dict[str, TransactionMetadata] = {}
        self._by_producer: dict[int, TransactionMetadata] = {}
        self._locks: dict[str, trio.Lock] = {}
        self._timer_changed = trio.Event()
        clock.on_advance(self._deadlines_changed)
        #: the state partitions whose ids this broker coordinates; None alone: every id
        self.coordinated: set[int] | None = None
        #: in a cluster: send a transaction's markers to its partitions' leaders; returns the
        #: partitions whose leaders did not write them (tried again by the timer)
        self.send_markers: SendMarkers | None = None
        #: in a cluster: the partitions this leader had other brokers' coordinators add (Produce v12+)
        self.remote_adds: RemoteAdds | None = None
        #: the coordinator epoch per state partition (its leader epoch), in a cluster
        self.coordinator_epochs: dict[int, int] = {}
        #: partitions that already have the marker of a completing transaction (its retries skip them)
        self._marked: dict[str, set[tuple[str, int]]] = {}

    # ---------------------------------------------------------------- start

    def load(self) -> int:
        """Read the state log back; returns how many transactional ids it holds."""
        self.transactions = self.state_log.load()
        self._by_producer = {m.producer_id: m for m in self.transactions.values()}
        return len(self.transactions)

    def coordinates(self, tid: str) -> bool:
        """Whether this broker coordinates ``tid`` (alone: always)."""
        return self.coordinated is None or self.state_log.partition_of(tid) in self.coordinated

    def take_over(self, partition: int) -> int:
        """Coordinate the ids of state ``partition`` (read back from its log); how many there are.

        A transaction found in Prepare* is completed by the timer, one found
        open is aborted once its timeout passes, as after a start."""
        loaded = self.state_log.load(partition)
        for tid, meta in loaded.items():
            old = self.transactions.get(tid)
            if old is not None:
                self._by_producer.pop(old.producer_id, None)
            self.transactions[tid] = meta
            self._by_producer[meta.producer_id] = meta
        if self.coordinated is not None:
            self.coordinated.add(partition)
        self._deadlines_changed()
        return len(loaded)

    def give_up(self, partition: int) -> None:
        """Forget the ids of state ``partition``: another broker coordinates them now."""
        if self.coordinated is not None:
            self.coordinated.discard(partition)
        for tid, meta in list(self.transactions.items()):
            if self.state_log.partition_of(tid) == partition:
                del self.transactions[tid]
                if self._by_producer.get(meta.producer_id) is meta:
                    del self._by_producer[meta.producer_id]
                self._marked.pop(tid, None)

    def _now_ms(self) -> int:
        return self.clock.wall_ms()

    def _lock(self, tid: str) -> trio.Lock:
        lock = self._locks.get(tid)
        if lock is None:
            lock = self._locks[tid] = trio.Lock()
        return lock

    async def _persist(self, meta: TransactionMetadata) -> None:
        meta.last_update_ms = self._now_ms()
        await self.state_log.write(meta)
        self._deadlines_changed()

    # ---------------------------------------------------------------- checks

    def _check(self, tid: str, producer_id: int, epoch: int) -> tuple[int, TransactionMetadata | None]:
        """(error, metadata) for a request of ``producer_id``/``epoch`` on ``tid``."""
        if not self.coordinates(tid):
            return ErrorCode.NOT_COORDINATOR, None
        meta = self.transactions.get(tid)
        if meta is None or meta.producer_id != producer_id:
            return ErrorCode.INVALID_PRODUCER_ID_MAPPING, None
        if epoch != meta.producer_epoch:
            return ErrorCode.PRODUCER_FENCED, None
        if meta.state.completing:
            return ErrorCode.CONCURRENT_TRANSACTIONS, None
        return ErrorCode.NONE, meta

    def valid_timeout(self, timeout_ms: int) -> bool:
        return 0 < timeout_ms <= self.max_timeout_ms

    # ---------------------------------------------------------------- InitProducerId

    async def init_producer_id(
        self,
        tid: str,
        timeout_ms: int,
        producer_id: int = -1,
        producer_epoch: int = -1,
        *,
        two_phase: bool = False,
    ) -> InitResult:
        """A producer id and a bumped epoch for ``tid``, its open transaction aborted first.

        ``producer_id``/``producer_epoch`` (v3+, -1 when not given) are what a
        restarting client still holds: they must be the id's current ones.
        ``two_phase`` (KIP-939: an external transaction manager decides the
        outcome) lifts the timeout: such a transaction is never aborted by
        the coordinator's clock.
        """
        if two_phase:
            timeout_ms = NO_TIMEOUT_MS
        elif not self.valid_timeout(timeout_ms):
            return InitResult(ErrorCode.INVALID_TRANSACTION_TIMEOUT)
        if not self.coordinates(tid):
            return InitResult(ErrorCode.NOT_COORDINATOR)
        async with self._lock(tid):
            meta = self.transactions.get(tid)
            if meta is None:
                pid = await self.logs.producer_ids.allocate()
                meta = TransactionMetadata(tid, pid, 0, timeout_ms)
                await self._persist(meta)
                self.transactions[tid] = meta
                self._by_producer[pid] = meta
                return InitResult(ErrorCode.NONE, pid, 0)
            if producer_id >= 0 and (producer_id, producer_epoch) != (meta.producer_id, meta.producer_epoch):
                return InitResult(ErrorCode.PRODUCER_FENCED)
            if meta.state.completing:
                return InitResult(ErrorCode.CONCURRENT_TRANSACTIONS)
            if meta.state is TxnState.ONGOING:
                await self._fence_and_abort(meta)
                if meta.state is not TxnState.COMPLETE_ABORT:  # markers not written yet: retried by the timer
                    return InitResult(ErrorCode.CONCURRENT_TRANSACTIONS)
            if meta.producer_epoch >= MAX_EPOCH - 1:  # epochs exhausted: a new producer id, as Kafka
                del self._by_producer[meta.producer_id]
                meta.producer_id = await self.logs.producer_ids.allocate()
                meta.producer_epoch = 0
                self._by_producer[meta.producer_id] = meta
            else:
                meta.producer_epoch += 1
            meta.timeout_ms = timeout_ms
            meta.fire(TxnEvent.INIT)
            meta.partitions.clear()
            meta.groups.clear()
            meta.start_ms = -1
            await self._persist(meta)
            return InitResult(ErrorCode.NONE, meta.producer_id, meta.producer_epoch)

    # ---------------------------------------------------------------- the transaction grows

    async def add_partitions(
        self, tid: str, producer_id: int, epoch: int, partitions: Iterable[tuple[str, int]]
    ) -> int:
        """Add ``partitions`` (existing ones: the handler checked) to ``tid``'s transaction."""
        code, meta = self._check(tid, producer_id, epoch)
        if meta is None:
            return code
        async with self._lock(tid):
            code, meta = self._check(tid, producer_id, epoch)
            if meta is None:
                return code
            ongoing = meta.state is TxnState.ONGOING
            new = set(partitions) - meta.partitions if ongoing else set(partitions)
            if ongoing and not new:
                return ErrorCode.NONE  # a retry: nothing to log
            before = (meta.state, set(meta.partitions), set(meta.groups), meta.start_ms)
            if not ongoing:  # the first partition of a new transaction
                meta.partitions.clear()
                meta.groups.clear()
                meta.start_ms = self._now_ms()
            meta.fire(TxnEvent.ADD)
            meta.partitions |= new
            try:
                await self._persist(meta)
            except OSError:
                meta.state, meta.partitions, meta.groups, meta.start_ms = before
                raise
            return ErrorCode.NONE

    def verify(
        self, tid: str, producer_id: int, epoch: int, partitions: Iterable[tuple[str, int]]
    ) -> dict[tuple[str, int], int]:
        """AddPartitionsToTxn's verify-only answer: each partition's code, nothing changed."""
        code, meta = self._check(tid, producer_id, epoch)
        out = {}
        for tp in partitions:
            if meta is None:
                out[tp] = code
            else:
                ongoing = meta.state is TxnState.ONGOING and tp in meta.partitions
                out[tp] = ErrorCode.NONE if ongoing else ErrorCode.INVALID_TXN_STATE
        return out

    async def add_offsets(self, tid: str, producer_id: int, epoch: int, group: str) -> int:
        """Add ``group``'s offsets (the ``__consumer_offsets`` partition) to the transaction."""
        partition = self.offsets.partition_of(group)
        code = await self.add_partitions(tid, producer_id, epoch, [(OFFSETS_TOPIC, partition)])
        if code == ErrorCode.NONE:
            self.transactions[tid].groups.add(group)
        return code

    def check_offset_commit(self, tid: str, producer_id: int, epoch: int, group: str) -> int:
        """May ``tid``'s transaction commit offsets of ``group`` now (AddOffsetsToTxn first)?"""
        if not self.coordinates(tid):
            # in a cluster the group's coordinator is asked, and another broker may coordinate
            # the transaction: as in Kafka, the group's coordinator takes the offsets unchecked
            # (the transaction's marker makes them visible or drops them)
            return ErrorCode.NONE
        code, meta = self._check(tid, producer_id, epoch)
        if meta is None:
            return ErrorCode.INVALID_PRODUCER_EPOCH if code == ErrorCode.PRODUCER_FENCED else code
        if meta.state is not TxnState.ONGOING or group not in meta.groups:
            return ErrorCode.INVALID_TXN_STATE
        return ErrorCode.NONE

    def check_produce(self, producer_id: int, epoch: int, topic: str, partition: int) -> int:
        """May a transactional batch of ``producer_id`` go to this partition (KIP-890's check)?"""
        meta = self._by_producer.get(producer_id)
        if meta is None and self.coordinated is not None:
            # in a cluster another broker may coordinate the producer's id: the leader cannot
            # check (Kafka would ask that coordinator; not built), so the batch is taken
            return ErrorCode.NONE
        if meta is None:  # an idempotent producer's batch marked transactional: no transaction to join
            return ErrorCode.INVALID_TXN_STATE
        if epoch < meta.producer_epoch:
            return ErrorCode.INVALID_PRODUCER_EPOCH
        if epoch != meta.producer_epoch or meta.state is not TxnState.ONGOING:
            return ErrorCode.INVALID_TXN_STATE
        if (topic, partition) not in meta.partitions:
            return ErrorCode.INVALID_TXN_STATE
        return ErrorCode.NONE

    # ---------------------------------------------------------------- the transaction ends

    async def end_transaction(self, tid: str, producer_id: int, epoch: int, commit: bool) -> int:
        """EndTxn: commit or abort ``tid``'s open transaction (a retry of a finished one is NONE)."""
        code, meta = self._check(tid, producer_id, epoch)
        if meta is None:
            return code
        async with self._lock(tid):
            code, meta = self._check(tid, producer_id, epoch)
            if meta is None:
                return code
            if meta.state is TxnState.COMPLETE_COMMIT:
                return ErrorCode.NONE if commit else ErrorCode.INVALID_TXN_STATE
            if meta.state is TxnState.COMPLETE_ABORT:
                return ErrorCode.INVALID_TXN_STATE if commit else ErrorCode.NONE
            if meta.state is not TxnState.ONGOING:
                return ErrorCode.INVALID_TXN_STATE
            before = meta.state
            meta.fire(TxnEvent.END_COMMIT if commit else TxnEvent.END_ABORT)
            try:
                await self._persist(meta)
            except OSError:  # not logged, so not acted on (Kafka reverts the pending state too)
                meta.state = before
                raise
            await self._complete(meta)
            return ErrorCode.NONE

    async def end_transaction_v2(self, tid: str, producer_id: int, epoch: int, commit: bool) -> EndResult:
        """EndTxn v5+: end ``tid``'s transaction and bump the epoch (transaction version 2).

        An abort with no transaction open ends one all the same (the client
        began a transaction whose first write never arrived); a commit then
        is INVALID_TXN_STATE.  The request of the epoch just bumped is a
        retry: the outcome it asked for is answered NONE again (with the
        producer id and epoch it led to), the other one INVALID_TXN_STATE.
        """
        if not self.coordinates(tid):
            return EndResult(ErrorCode.NOT_COORDINATOR)
        async with self._lock(tid):
            meta = self.transactions.get(tid)
            if meta is None:
                return EndResult(ErrorCode.INVALID_PRODUCER_ID_MAPPING)
            if self._ended_by(meta, producer_id, epoch):
                if meta.state.completing:
                    return EndResult(ErrorCode.CONCURRENT_TRANSACTIONS)
                done = {TxnState.COMPLETE_COMMIT: True, TxnState.COMPLETE_ABORT: False}.get(meta.state)
                if done is commit:
                    return EndResult(ErrorCode.NONE, meta.producer_id, meta.producer_epoch)
                return EndResult(ErrorCode.INVALID_TXN_STATE)
            code, checked = self._check(tid, producer_id, epoch)
            if checked is None:
                return EndResult(code)
            if meta.state is not TxnState.ONGOING and (commit or not meta.state.idle):
                return EndResult(ErrorCode.INVALID_TXN_STATE)
            if meta.state.idle:  # an abort of a transaction that wrote nothing here
                meta.partitions.clear()
                meta.groups.clear()
            if meta.producer_epoch >= MAX_EPOCH - 1:  # the markers take the last epoch, then a new id
                meta.next_producer_id = await self.logs.producer_ids.allocate()
            meta.producer_epoch += 1
            meta.fire(TxnEvent.END_COMMIT if commit else TxnEvent.END_ABORT)
            await self._persist(meta)
            await self._complete(meta)
            return EndResult(ErrorCode.NONE, meta.producer_id, meta.producer_epoch)

    @staticmethod
    def _ended_by(meta: TransactionMetadata, producer_id: int, epoch: int) -> bool:
        """Is (``producer_id``, ``epoch``) the pair whose EndTxn v5 ended ``meta``'s last
        transaction (the epoch before the bump, or the id before a move to a new one)?"""
        if not (meta.state.completing or meta.state in (TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT)):
            return False
        if producer_id == meta.producer_id:
            return epoch + 1 == meta.producer_epoch and epoch >= 0
        moved = meta.next_producer_id < 0 and meta.producer_epoch == 0
        return moved and producer_id == meta.previous_producer_id and epoch == MAX_EPOCH - 1

    async def _fence_and_abort(self, meta: TransactionMetadata) -> None:
        """Bump the epoch of ``meta``'s open transaction and abort it under the new epoch."""
        if meta.producer_epoch >= MAX_EPOCH:
            log.error(
                "transactional id %s: epoch exhausted, its transaction is aborted as is",
                meta.transactional_id,
            )
        else:
            meta.producer_epoch += 1
        meta.fire(TxnEvent.FENCE)
        meta.fire(TxnEvent.END_ABORT)
        await self._persist(meta)
        await self._complete(meta)

    async def _complete(self, meta: TransactionMetadata) -> None:
        """Write the markers of a Prepare* transaction, then log its completion.

        A failure leaves the state Prepare*, for the timer to retry.
        """
        commit = meta.state is TxnState.PREPARE_COMMIT
        if self.send_markers is not None:
            await self._complete_in_cluster(meta, commit)
            return
        try:
            for topic, partition in sorted(meta.partitions):
                plog = self.logs.get(topic, partition)
                if plog is None:  # deleted since it was added: nothing to mark
                    continue
                try:
                    await plog.append_marker(
                        meta.producer_id,
                        meta.producer_epoch,
                        commit=commit,
                        coordinator_epoch=COORDINATOR_EPOCH,
                    )
                except (PartitionDeletedError, InvalidProducerEpochError) as exc:
                    # deleted meanwhile, or a newer epoch already wrote there: no marker is due
                    log.warning(
                        "transactional id %s: no marker on %s-%d: %s",
                        meta.transactional_id,
                        topic,
                        partition,
                        exc,
                    )
                    continue
                if topic == OFFSETS_TOPIC:
                    self.offsets.complete_transaction(meta.producer_id, commit=commit)
            meta.fire(TxnEvent.MARKERS_WRITTEN)
            if meta.next_producer_id >= 0:  # transaction version 2, epochs exhausted: a new id
                self._by_producer.pop(meta.producer_id, None)
                meta.previous_producer_id, meta.producer_id = meta.producer_id, meta.next_producer_id
                meta.producer_epoch, meta.next_producer_id = 0, -1
                self._by_producer[meta.producer_id] = meta
            await self._persist(meta)
        except OSError as exc:
            log.error("transactional id %s: markers not written (%s); retrying", meta.transactional_id, exc)

    async def _complete_in_cluster(self, meta: TransactionMetadata, commit: bool) -> None:
        """The markers through each partition's leader, then Complete*; what a leader did not
        write is tried again by the timer (a leader change: the new leader is asked)."""
        assert self.send_markers is not None
        tid = meta.transactional_id
        done = self._marked.setdefault(tid, set())
        epoch = self.coordinator_epochs.get(self.state_log.partition_of(tid), COORDINATOR_EPOCH)
        due = sorted(meta.partitions - done)
        left = await self.send_markers(meta.producer_id, meta.producer_epoch, commit, epoch, due)
        done.update(set(due) - set(left))
        if left:
            log.warning("transactional id %s: markers not written yet on %s; retrying", tid, left)
            return
        before = meta.state
        try:
            meta.fire(TxnEvent.MARKERS_WRITTEN)
            await self._persist(meta)
        except OSError as exc:  # still Prepare*: the timer logs the completion again
            meta.state = before
            log.error("transactional id %s: completion not logged (%s); retrying", tid, exc)
            return
        self._marked.pop(tid, None)

    # ---------------------------------------------------------------- timers

    def _deadlines_changed(self) -> None:
        self._timer_changed.set()

    def _next_deadline_ms(self) -> int | None:
        deadlines = []
        for meta in self.transactions.values():
            if meta.state is TxnState.ONGOING and meta.start_ms >= 0 and meta.timeout_ms != NO_TIMEOUT_MS:
                deadlines.append(meta.start_ms + meta.timeout_ms)
            elif meta.state.idle:
                deadlines.append(meta.last_update_ms + self.id_expiration_ms)
        return min(deadlines, default=None)

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Complete what the state log left half done, then abort timed-out transactions and
        forget expired ids, each as its deadline on the broker's clock passes."""
        task_status.started()
        while True:
            try:
                retry = await self.expire()
            except Exception:  # one transactional id's failure must not stop the broker
                log.exception("transaction timer pass failed; retrying")
                retry = True
            nxt = self._next_deadline_ms()
            self._timer_changed = trio.Event()
            wait_s = 3600.0 if nxt is None else max(0.0, (nxt - self._now_ms()) / 1000)
            if retry:
                wait_s = min(wait_s, RETRY_S)
            with trio.move_on_after(wait_s):
                await self._timer_changed.wait()

    async def expire(self) -> bool:
        """One pass of the timer; True when some transaction still waits for its markers."""
        now = self._now_ms()
        unfinished = False
        for meta in list(self.transactions.values()):
            tid = meta.transactional_id
            if meta.state.completing or meta.expired(now):
                async with self._lock(tid):
                    if meta.state is TxnState.ONGOING and meta.expired(self._now_ms()):
                        log.info("transactional id %s: transaction timed out, aborting", tid)
                        await self._fence_and_abort(meta)
                    elif meta.state is TxnState.PREPARE_EPOCH_FENCE:
                        meta.fire(TxnEvent.END_ABORT)
                        await self._persist(meta)
                        await self._complete(meta)
                    elif meta.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
                        await self._complete(meta)
                unfinished |= meta.state.completing
            elif meta.state.idle and now >= meta.last_update_ms + self.id_expiration_ms:
                async with self._lock(tid):
                    if self.transactions.get(tid) is meta and meta.state.idle:
                        log.info("transactional id %s expired", tid)
                        await self.state_log.forget(tid)
                        meta.fire(TxnEvent.EXPIRE)
                        del self.transactions[tid]
                        self._by_producer.pop(meta.producer_id, None)
                        self._locks.pop(tid, None)
        return unfinished

    # ---------------------------------------------------------------- describe

    def describe(self, tid: str) -> TransactionMetadata | None:
        return self.transactions.get(tid)
