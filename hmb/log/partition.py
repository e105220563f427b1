"""One partition's log: its segments, appends, reads and flushing.

Retention and DeleteRecords are :mod:`hmb.log.retention`'s, lookups by time
:mod:`hmb.log.time_lookup`'s; this class keeps their entry points.

Rules of this module:

* Offsets are assigned here, inside the partition's MVar, together with the
  append: two producers can never be given the same offset, and an append
  that fails (corrupt input, disk full) assigns nothing.
* Alone (or with one replica) the high watermark is the log end offset: an
  append is visible to fetches as soon as it is written.  Replication sets
  it lower (:meth:`PartitionLog.set_high_watermark`): consumers read up to
  it, followers (``replica=True``) up to the log end.
* Readers get file regions (:mod:`hmb.log.region`), not bytes: the network
  layer sends them with ``os.sendfile``.  The segment stays open while
  pinned by a reader.
* A transactional batch opens (or continues) its producer's transaction, a
  marker (:meth:`PartitionLog.append_marker`) ends it; what is open and what
  was aborted is :mod:`hmb.log.transactions`'s.  The last stable offset is
  where read_committed readers stop; :meth:`PartitionLog.read` stops where
  its caller says (``end_offset``).
* Compaction: a topic whose ``cleanup.policy`` has ``compact`` refuses an
  append holding a record without a key, whole; retention by age and size
  applies only when it has ``delete``.  The log cleaner (:mod:`hmb.log.cleaner`)
  swaps its cleaned segments in under :meth:`PartitionLog.exclusive`, and an
  interrupted swap is finished or rolled back when the files are read.
* Refusals are the log's own exceptions (:mod:`hmb.log.errors`), the
  codec's, or ``OSError``; which error code a client gets for them is the
  API layer's business.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import trio

from hmb.log import markers, reading, replica_writes, retention, time_lookup
from hmb.log.cleaner.swap import finish_interrupted_swaps
from hmb.log.config import NEVER, LogConfig
from hmb.log.errors import (
    DuplicateSequenceError,
    KeylessRecordError,
    MagicNotAllowedError,
    PartitionDeletedError,
    RecordListTooLargeError,
    TransactionalBatchError,
)
from hmb.log.leader_epochs import LEADER_EPOCH, LeaderEpochCache
from hmb.log.producer_persistence import rebuild_from_log, restore_snapshot, write_snapshot
from hmb.log.producer_state import ProducerStateManager
from hmb.log.recompression import KEEP_PRODUCER_CODEC, stored_form
from hmb.log.region import FileRegion
from hmb.log.segment import UNKNOWN_MAGIC, LogSegment, RecoveryReport, log_recovery
from hmb.log.segment_map import SegmentMap
from hmb.log.time_lookup import TimestampMatch
from hmb.log.timestamp_bounds import check_timestamps
from hmb.log.transactions import PartitionTransactions
from hmb.log.txn_index import load_txn_indexes
from hmb.mvar import MVar
from kproto.records import assign_batches
from kproto.records.batch_assign import ProducerBatch
from kproto.records.compact import first_keyless
from kproto.records.entry import MAGIC_OFFSET
from kproto.records.log_append_time import stamp_log_append_time

log = logging.getLogger(__name__)


class AppendInfo(NamedTuple):
    """Where an append landed (a tuple: built once per produced partition, it must be cheap)."""

    base_offset: int
    last_offset: int
    count: int  # type: ignore[assignment]  # shadows tuple.count; the name is the API
    duplicate: bool = False  # an idempotent producer's retry: already in the log at these offsets
    log_append_time: int = -1  # the broker's stamp in ms (LogAppendTime topics), else -1


@dataclass(slots=True)
class _State:
    """What the MVar guards: the mutable part of the log."""

    unflushed_messages: int = 0
    last_flush: float = field(default_factory=time.monotonic)


class PartitionLog:
    """The log of ``topic``/``partition`` in ``directory``.

    A broker holds thousands: the class is slotted, and what most partitions
    never use (producer state, transactions, the leader epochs of a new
    partition) is made at its first use (:attr:`producers`, :attr:`txns`,
    :attr:`epochs`)."""

    __slots__ = (
        "_active_since",
        "_clean",
        "_directory",
        "_epochs",
        "_high_watermark",
        "_leader_epoch",
        "_load_lock",
        "_producers",
        "_segments",
        "_state",
        "_txns",
        "_waiters",
        "config",
        "deleted",
        "deleted_before",
        "on_leader_append",
        "partition",
        "topic",
        "wall",
    )

    def __init__(self, directory: Path | str, topic: str, partition: int, config: LogConfig) -> None:
        # a str, not a Path: a Path with its parsed parts costs ~0.2 KiB more per partition
        self._directory = os.fspath(directory)
        self.topic = topic
        self.partition = partition
        self.config = config
        # base offset -> LogSegment; None until the files are read (see :meth:`open`, ``lazy``)
        self._segments: SegmentMap | None = None
        self._clean = True
        # a worker thread may be loading it (LogManager.run_loader): made by open(lazy=True)
        self._load_lock: threading.Lock | None = None
        self._state = MVar(_State())
        # what the next append wakes (wake_on_append); None while nobody waits: 10,000 partitions
        self._waiters: set[trio.Event] | None = None
        self._producers: ProducerStateManager | None = None
        self._txns: PartitionTransactions | None = None
        self._epochs: LeaderEpochCache | None = None  # read with the segments (see load)
        # None: the high watermark is the log end (alone, or one replica); a replicated
        # partition's leader and followers set it (set_high_watermark)
        self._high_watermark: int | None = None
        self._leader_epoch = LEADER_EPOCH  # stamped into appended batches (see lead)
        #: called after each append while this broker leads a replicated partition: the
        #: leader's high watermark may move (hmb.replication)
        self.on_leader_append: Callable[[], None] | None = None
        self.deleted = False
        #: where DeleteRecords moved the log's start (0: the first segment's base decides)
        self.deleted_before = 0
        self.wall: Callable[[], float] = time.time  # the broker's clock (hmb.clock), set by the manager
        self._active_since: float | None = None  # segment.ms: the active segment's first append

    # ---------------------------------------------------------------- opening

    def _new_segment(self, base_offset: int, *, new: bool = False) -> LogSegment:
        return LogSegment(
            self._directory,
            base_offset,
            index_interval_bytes=self.config.index_interval_bytes,
            index_max_bytes=self.config.index_max_bytes,
            new=new,
        )

    @classmethod
    def create(cls, directory: Path, topic: str, partition: int, config: LogConfig) -> PartitionLog:
        """A new, empty partition: its directory and first segment, nothing read.

        CreateTopics makes thousands of these; each costs one directory and two
        files.  A directory that already exists is opened as it is instead.
        """
        try:
            os.mkdir(directory)
        except FileExistsError:
            return cls.open(directory, topic, partition, config, clean=True)
        self = cls(directory, topic, partition, config)
        self._segments = SegmentMap([(0, self._new_segment(0, new=True))])
        # the checkpoint is written now; the cache (the same one entry) is made when first asked for
        LeaderEpochCache(directory).assign(LEADER_EPOCH, 0, fresh=True)
        return self

    @classmethod
    def open(
        cls,
        directory: Path,
        topic: str,
        partition: int,
        config: LogConfig,
        *,
        clean: bool,
        lazy: bool = False,
    ) -> PartitionLog:
        """Load (or create) the log; after an unclean shutdown, validate and repair the tail.

        ``lazy``: touch no file now; they are read at the first use of
        :attr:`segments` (or by :meth:`load`).  A broker with 10,000
        partitions answers its first request without reading them all.
        """
        self = cls(directory, topic, partition, config)
        self._clean = clean
        self._segments = None
        if lazy:
            self._load_lock = threading.Lock()
        else:
            self.load()
        return self

    @property
    def loaded(self) -> bool:
        return self._segments is not None

    @property
    def segments(self) -> SegmentMap:
        """Base offset -> :class:`LogSegment`, read from the files at the first use."""
        segments = self._segments
        if segments is None:
            segments = self.load()
        return segments

    def load(self) -> SegmentMap:
        """Read the segment files (once; safe from a worker thread)."""
        if self._segments is not None:
            return self._segments
        with self._load_lock or contextlib.nullcontext():
            if self._segments is not None:
                return self._segments
            directory = self.directory
            directory.mkdir(parents=True, exist_ok=True)
            segments = SegmentMap()
            names = finish_interrupted_swaps(directory, [p.name for p in directory.iterdir()])
            bases = sorted(int(n[:-4]) for n in names if n.endswith(".log") and n[:-4].isdigit())
            for name in names:
                stem = name[:-6]
                if name.endswith(".index") and stem.isdigit() and int(stem) not in bases:
                    (directory / name).unlink()
                if name.endswith(".timeindex") and name[:-10].isdigit() and int(name[:-10]) not in bases:
                    (directory / name).unlink()
            cfg = self.config
            max_entry = cfg.max_message_bytes + 1024 * 1024 + cfg.segment_bytes
            for i, base in enumerate(bases):
                seg = self._new_segment(base)
                last = i == len(bases) - 1
                report: RecoveryReport | None
                report = seg.recover(max_entry) if last and not self._clean else seg.load_tail(max_entry)
                if report is not None:  # after a clean shutdown: load_tail found something to repair
                    log_recovery(f"{self.topic}-{self.partition}", seg, report)
                segments[base] = seg
            if not segments:
                segments[0] = self._new_segment(0)
            leo = segments.last.next_offset
            restored = restore_snapshot(directory, leo, self.txns) if self._clean else None
            replayed, replayed_from = None, 0
            if restored is None:
                replayed_from = rebuild_from_log(segments, self.producers, self.txns)
                replayed = self.txns.aborted
            else:
                self.producers = restored
            self.txns.aborted = load_txn_indexes(directory, names, segments, replayed, replayed_from)
            self._epochs = LeaderEpochCache.load(directory)
            self._epochs.assign(LEADER_EPOCH, leo)  # led from its end, if new to it
            self._segments = segments
            return segments

    # ---------------------------------------------------------------- state

    @property
    def directory(self) -> Path:
        """The partition's directory (``<log dir>/<topic>-<partition>``), made when asked for."""
        return Path(self._directory)

    @property
    def producers(self) -> ProducerStateManager:
        """Idempotent producers' sequence state (made at the first use)."""
        if self._producers is None:
            self._producers = ProducerStateManager()
        return self._producers

    @producers.setter
    def producers(self, value: ProducerStateManager) -> None:
        self._producers = value

    @property
    def txns(self) -> PartitionTransactions:
        """Open and aborted transactions (made at the first use)."""
        if self._txns is None:
            self._txns = PartitionTransactions()
        return self._txns

    @property
    def epochs(self) -> LeaderEpochCache:
        """The leader epochs; a partition created by this broker has the one it was created
        with until the cache is first needed (its checkpoint file is written at creation)."""
        if self._epochs is None:
            self.segments  # noqa: B018 - an opened log reads its checkpoint with the segments
        if self._epochs is None:
            self._epochs = LeaderEpochCache(self.directory, [(LEADER_EPOCH, 0)])
        return self._epochs

    @property
    def active(self) -> LogSegment:
        return self.segments.last

    @property
    def log_start_offset(self) -> int:
        """The first offset a reader may ask for: the first segment's, or where records were deleted."""
        return max(self.segments.first.base_offset, self.deleted_before)

    @property
    def log_end_offset(self) -> int:
        """The next offset to be written."""
        return self.active.next_offset

    @property
    def high_watermark(self) -> int:
        """The end of what consumers may read: the log end offset unless replication set it
        lower (the offset every in-sync replica holds), never past the log end."""
        log_end = self.active.next_offset
        hw = self._high_watermark
        return log_end if hw is None else min(hw, log_end)

    @property
    def high_watermark_known(self) -> bool:
        """Whether replication has set the high watermark since the log was opened (until then
        it is the log end, which a replica that just started cannot vouch for)."""
        return self._high_watermark is not None

    def set_high_watermark(self, offset: int | None) -> None:
        """Make ``offset`` the high watermark (``None``: follow the log end again, as alone).

        Readers waiting for new records are woken when it moves forward: what
        they may read grew even though nothing was appended."""
        old = self.high_watermark
        self._high_watermark = offset
        if self.high_watermark > old:
            self._wake_readers()

    @property
    def leader_epoch(self) -> int:
        """The epoch this broker leads (or last led) the partition in: appends are stamped with it."""
        return self._leader_epoch

    def lead(self, epoch: int) -> None:
        """Lead from now on in ``epoch``: it begins at the log end (leader-epoch-checkpoint)."""
        self._leader_epoch = epoch
        self.epochs.assign(epoch, self.log_end_offset)

    async def append_replicated(self, records: bytes | bytearray | memoryview) -> int:
        """Append a leader's batches as they are (:func:`hmb.log.replica_writes.append_replicated`)."""
        return await replica_writes.append_replicated(self, records)

    async def restart_at(self, offset: int) -> None:
        """Empty the log to start at ``offset`` (:func:`hmb.log.replica_writes.restart_at`)."""
        await replica_writes.restart_at(self, offset)

    async def truncate_to(self, offset: int) -> None:
        """Cut the log back to end at ``offset`` (:func:`hmb.log.replica_writes.truncate_to`)."""
        await replica_writes.truncate_to(self, offset)

    @property
    def size_bytes(self) -> int:
        return sum(seg.size for seg in self.segments.values())

    def wake_on_append(self, event: trio.Event) -> None:
        """Set ``event`` at the next append (or when what readers may see grows, or at deletion).

        A long-polling Fetch registers one event with every partition it
        reads and waits on that one: no task and no event per partition
        (a Fetch of 3,000 partitions that waited through a task per partition
        raised the broker's memory by 11 MB).  The waiter calls
        :meth:`stop_waking` when it stops waiting, woken here or not.
        """
        if self._waiters is None:
            self._waiters = set()
        self._waiters.add(event)

    def stop_waking(self, event: trio.Event) -> None:
        """Forget ``event`` (:meth:`wake_on_append`); nothing if an append already woke it."""
        waiters = self._waiters
        if waiters is not None:
            waiters.discard(event)
            if not waiters:
                self._waiters = None

    # ---------------------------------------------------------------- writing

    async def append(self, records: bytes | bytearray, *, max_magic: int = 2) -> AppendInfo:
        """Validate ``records`` (MessageSet v0/v1 and/or RecordBatch v2), assign offsets, append.

        ``max_magic`` is the newest message format this append accepts; the
        only line drawn today is at RecordBatches: with ``max_magic`` below 2
        one raises :class:`~hmb.log.errors.MagicNotAllowedError` (MessageSets
        of magic 0 and 1 are taken whatever the caller's format, as Kafka
        takes them).  An idempotent producer's batch is checked against its
        sequence state first: a retry of a batch already in the log is
        answered with its original offsets and not appended again.  Raises
        :class:`kproto.CorruptRecordError`,
        :class:`kproto.records.RecordTooLargeError`, one of
        :mod:`hmb.log.errors` or ``OSError``; nothing is written then.  A
        bytearray ``records`` is numbered in place (no copy).

        When nobody else holds the partition's state the append takes it
        without a trip through the scheduler (it still raises if cancelled);
        otherwise it queues for it, first come first served.
        """
        if len(records) > self.config.segment_bytes:
            raise RecordListTooLargeError(f"{len(records)} bytes exceed log.segment.bytes")
        await trio.lowlevel.checkpoint_if_cancelled()
        mvar = self._state
        try:
            state = mvar.take_nowait()
        except trio.WouldBlock:
            state = await mvar.take()
        try:
            info = await self._append_locked(state, records, max_magic)
        finally:
            mvar.put_nowait(state)
        self._wake_readers()
        if self.on_leader_append is not None:
            self.on_leader_append()
        return info

    def _wake_readers(self) -> None:
        waiters = self._waiters
        if waiters is not None:
            self._waiters = None
            for event in waiters:
                event.set()

    async def _append_locked(self, state: _State, records: bytes | bytearray, max_magic: int) -> AppendInfo:
        if self.deleted:
            raise PartitionDeletedError(f"{self.topic}-{self.partition} was deleted")
        seg = self.active
        base = seg.next_offset
        result = assign_batches(
            records,
            base,
            max_message_bytes=self.config.max_message_bytes,
            partition_leader_epoch=self._leader_epoch,
        )
        batches = result.producer_batches
        idempotent: list[ProducerBatch] = []
        if batches:
            if max_magic < 2:
                raise MagicNotAllowedError(f"RecordBatch v2 (magic 2) where at most magic {max_magic} may be")
            idempotent = [b for b in batches if b.producer_id >= 0]
            for b in idempotent:
                if not b.is_transactional and self._txns is not None and b.producer_id in self._txns.ongoing:
                    raise TransactionalBatchError(
                        f"producer {b.producer_id} sent a non-transactional batch inside its transaction"
                    )
                check = self.producers.check(
                    b.producer_id, b.producer_epoch, b.base_sequence, b.last_offset_delta + 1
                )
                if check.duplicate is not None and len(batches) == 1:
                    d = check.duplicate
                    return AppendInfo(d.first_offset, d.last_offset, d.last_offset - d.first_offset + 1, True)
                if check.error is not None or check.duplicate is not None:
                    refusal = check.error or DuplicateSequenceError  # a duplicate mixed with new batches
                    raise refusal(
                        f"producer {b.producer_id} epoch {b.producer_epoch} seq {b.base_sequence} refused"
                    )
        cfg = self.config
        buf = result.buf
        if cfg.compact and (keyless := first_keyless(bytes(buf))) is not None:
            raise KeylessRecordError(f"record {keyless} has no key: {self.topic} is compacted")
        if cfg.compression_type != KEEP_PRODUCER_CODEC:
            buf = await stored_form(buf, cfg.compression_type, cfg.max_message_bytes)
        max_timestamp = result.max_timestamp
        append_time = -1
        if cfg.message_timestamp_type == "CreateTime":
            now_ms = int(self.wall() * 1000)
            before, after = cfg.message_timestamp_before_max_ms, cfg.message_timestamp_after_max_ms
            check_timestamps(buf, max_timestamp, now_ms, before, after)
        elif cfg.message_timestamp_type == "LogAppendTime":
            append_time = max_timestamp = int(self.wall() * 1000)
            buf = buf if isinstance(buf, bytearray) else bytearray(buf)
            stamp_log_append_time(buf, append_time)
        seg = self.active
        if self._roll_due(seg, len(buf)):
            seg = await self._roll(base)
        seg.append(buf, result.last_offset, _max_magic(buf, bool(batches), max_timestamp), max_timestamp)
        for b in idempotent:
            self.producers.record(
                b.producer_id,
                b.producer_epoch,
                b.base_sequence,
                b.last_offset_delta + 1,
                b.base_offset,
                b.base_offset + b.last_offset_delta,
            )
            if b.is_transactional:
                self.txns.begin(b.producer_id, b.base_offset)
        state.unflushed_messages += result.count
        if self._flush_due(state):
            await self._flush_now(state, seg)
        return AppendInfo(base, result.last_offset, result.count, False, append_time)

    def _roll_due(self, seg: LogSegment, size: int) -> bool:
        """Whether an append of ``size`` bytes must go to a new segment (the active one is ``seg``)."""
        if seg.size and (seg.size + size > self.config.segment_bytes or seg.index_full or self._aged()):
            return True
        if self._active_since is None:
            self._active_since = self.wall()
        return False

    async def _flush_now(self, state: _State, seg: LogSegment) -> None:
        await trio.to_thread.run_sync(seg.flush)
        state.unflushed_messages = 0
        state.last_flush = time.monotonic()

    async def append_marker(
        self, producer_id: int, producer_epoch: int, *, commit: bool, coordinator_epoch: int
    ) -> int:
        """Write a COMMIT (``commit``) or ABORT marker of the producer; returns its offset
        (:func:`hmb.log.markers.append_marker`, which says how)."""
        return await markers.append_marker(
            self, producer_id, producer_epoch, commit=commit, coordinator_epoch=coordinator_epoch
        )

    @property
    def last_stable_offset(self) -> int:
        """Where read_committed readers stop: the earliest open transaction's first offset, else
        the high watermark (never below the log start offset)."""
        hw = self.high_watermark  # reads the files first when they are not yet
        first = None if self._txns is None else self._txns.first_unstable_offset()
        return hw if first is None else max(first, self.log_start_offset)

    def aborted_transactions(
        self, fetch_offset: int, upper_offset: int, *, within: FileRegion | None = None
    ) -> list[tuple[int, int]]:
        """(producer id, first offset) of the aborted transactions overlapping
        ``[fetch_offset, upper_offset)``, as Fetch lists them for read_committed.

        ``within``: the records a fetch returns; the upper offset is then also
        bounded, as Kafka bounds it, near their end (the next offset the
        segment's index knows past the region), so a consumer far behind is
        not sent every later abort with each fetch.
        """
        self.segments  # noqa: B018 - the transactions are rebuilt when the files are read
        if self._txns is None or not self._txns.aborted:
            return []
        if within is not None:
            seg = within.segment
            assert isinstance(seg, LogSegment)
            found = seg.index.offset_from(within.position + within.length)
            upper_offset = min(upper_offset, seg.next_offset if found is None else found)
        return self.txns.aborted_in(fetch_offset, upper_offset)

    def ongoing_transactions(self) -> dict[int, int]:
        """Producer id -> first offset of every transaction open on this partition."""
        self.segments  # noqa: B018 - the transactions are rebuilt when the files are read
        return {} if self._txns is None else dict(self._txns.ongoing)

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        """``(epoch, end offset)`` of leader epoch ``epoch`` here (OffsetForLeaderEpoch)."""
        log_end = self.log_end_offset  # reads the files (and the epochs) if not yet read
        # a new partition's one epoch is answered without making its cache (clients ask for every one)
        epochs = self._epochs or LeaderEpochCache(self.directory, [(LEADER_EPOCH, 0)])
        return epochs.end_offset_for(epoch, log_end)

    def max_producer_id(self) -> int:
        """The highest producer id this partition's recent batches carry (-1: none)."""
        self.segments  # noqa: B018 - the state is rebuilt when the files are read
        return -1 if self._producers is None else max(self._producers.producers, default=-1)

    def _flush_due(self, state: _State) -> bool:
        cfg = self.config
        if state.unflushed_messages >= cfg.flush_interval_messages:
            return True
        if cfg.flush_interval_ms < NEVER:
            return (time.monotonic() - state.last_flush) * 1000 >= cfg.flush_interval_ms
        return False

    def _aged(self) -> bool:
        """segment.ms: the active segment took its first append longer ago than that (Kafka's
        roll by the first batch's time; a segment reopened at start counts from its next append)."""
        since = self._active_since
        return since is not None and (self.wall() - since) * 1000 >= self.config.segment_ms

    async def _roll(self, base_offset: int) -> LogSegment:
        old = self.active
        await trio.to_thread.run_sync(old.flush)
        old.seal()  # the time index's final entry; both indexes trimmed to their entries
        seg = self._new_segment(base_offset)
        seg.next_offset = base_offset
        self.segments[base_offset] = seg
        self._active_since = self.wall()
        log.info("rolled %s-%d: new segment %s", self.topic, self.partition, seg.log_path.name)
        return seg

    async def flush(self, *, only_if_due: bool = False) -> None:
        """fsync the active segment (the flush.ms scheduler).

        ``only_if_due``: only when this topic's ``flush.ms`` has passed since the
        last fsync (the scheduler ticks at the shortest interval of any topic).
        """
        async with self._state.modify() as state:
            if only_if_due and (time.monotonic() - state.last_flush) * 1000 < self.config.flush_interval_ms:
                return
            if state.unflushed_messages and not self.deleted:
                await trio.to_thread.run_sync(self.active.flush)
                state.unflushed_messages = 0
                state.last_flush = time.monotonic()

    # ---------------------------------------------------------------- reading

    def read(
        self,
        offset: int,
        max_bytes: int,
        *,
        min_one: bool = False,
        end_offset: int | None = None,
        replica: bool = False,
    ) -> reading.Reading:
        """``with`` the file region at ``offset`` (:func:`hmb.log.reading.pin_region`, which says how;
        a Fetch, which holds a region per partition until its answer is sent, calls that itself)."""
        return reading.Reading(self, offset, max_bytes, min_one, end_offset, replica)

    def offsets_before(self, timestamp: int, max_num_offsets: int) -> list[int]:
        """Kafka 0.8's ``getOffsetsBefore`` (:func:`hmb.log.time_lookup.offsets_before`)."""
        return time_lookup.offsets_before(self, timestamp, max_num_offsets)

    async def offset_for_timestamp(self, timestamp: int) -> TimestampMatch | None:
        """The first record with a timestamp >= ``timestamp`` (None: there is none)."""
        return await time_lookup.offset_for_timestamp(self, timestamp)

    async def offset_of_max_timestamp(self) -> TimestampMatch | None:
        """The first record with the largest timestamp (ListOffsets' MAX_TIMESTAMP); None: none has one."""
        return await time_lookup.offset_of_max_timestamp(self)

    # ---------------------------------------------------------------- retention

    async def apply_retention(self, now: float | None = None) -> list[int]:
        """Delete whole old segments past retention (:func:`hmb.log.retention.apply_retention`)."""
        return await retention.apply_retention(self, time.time() if now is None else now)

    @contextlib.asynccontextmanager
    async def exclusive(self) -> AsyncIterator[None]:
        """Hold the partition's lock: no append, retention or deletion meanwhile (the cleaner's swap)."""
        async with self._state.modify():
            yield

    async def delete_records(self, before: int) -> int:
        """Delete every record below ``before`` (:func:`hmb.log.retention.delete_records`)."""
        return await retention.delete_records(self, before)

    async def delete(self) -> None:
        """Refuse further appends, wake waiting fetches and close every file (DeleteTopics).

        The files are not flushed first: they are about to be removed.  The
        directory itself is removed by the log manager.  Readers holding a
        region keep their descriptors until they unpin them.
        """
        async with self._state.modify():
            self.deleted = True
            for seg in self.segments.values():
                seg.discard()
        self._wake_readers()

    def close(self) -> None:
        """Flush and close the files; the producer state goes to its snapshot."""
        if self._segments is not None and not self.deleted:
            try:
                write_snapshot(self.directory, self.producers, self.txns, self.log_end_offset)
            except OSError as exc:  # the next start rebuilds it from the log
                log.warning("cannot write the producer state of %s-%d: %s", self.topic, self.partition, exc)
        for seg in (self._segments or {}).values():  # never read: nothing to close
            try:
                seg.flush()
            except OSError:
                log.exception("flush of %s failed at close", seg.log_path)
            seg.close()


def _max_magic(buf: bytes | bytearray, has_v2: bool, max_timestamp: int) -> int:
    """The highest magic in an appended record set, from what validation already found.

    Any RecordBatch makes it 2.  Otherwise the first entry's magic, raised to 1
    when some message carries a timestamp (only magic 1 can).  A magic-1
    message with no timestamp behind a magic-0 first entry counts as 0: it
    may reach a reader that asked for magic 0 unconverted, and readers of
    that format read magic 1 too.
    """
    if has_v2:
        return 2
    if len(buf) <= MAGIC_OFFSET:
        return UNKNOWN_MAGIC
    return max(buf[MAGIC_OFFSET], 1 if max_timestamp >= 0 else 0)
