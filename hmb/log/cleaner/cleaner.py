"""The log cleaner: which compacted partition to clean next, the cleaning, and what it did.

Rules of this module:

* A partition is cleaned when its topic's ``cleanup.policy`` has ``compact``
  and its dirty ratio (bytes written since the last cleaning over all the
  cleanable bytes) reaches ``min.cleanable.dirty.ratio``, or its oldest dirty
  record is older than ``max.compaction.lag.ms``, or tombstones it kept have
  passed their delete horizon.  The dirtiest goes first, as in Kafka.
* The dirty section ends at the active segment (never cleaned) and, with
  ``min.compaction.lag.ms``, at the first segment holding a record younger
  than that.  Times come from the broker's clock, so a test moves it forward.
* ``log.cleaner.threads`` cleanings run at once, each in a worker thread;
  the event loop only picks partitions and swaps files.  The swap, and only
  the swap, holds the partition's lock: appends and fetches wait for a few
  renames at most.
* Where each partition's dirty section starts is kept in each log dir's
  ``cleaner-offset-checkpoint`` (Kafka's file and format), rewritten after each
  cleaning; a crash before that only makes the next cleaning redo work.
* One log line per cleaning, as Kafka's cleaner writes it, and the numbers
  behind it per partition for the control API and ``hmb`` (:meth:`LogCleaner.state`).
"""

from __future__ import annotations

import bisect
import contextlib
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import trio

from hmb.log import start_offsets
from hmb.log.cleaner import rewrite, swap
from hmb.log.cleaner.offset_map import OffsetMap, slots_for
from hmb.log.cleaner.rewrite import CleanerStoppedError, GroupResult, Throttle
from hmb.log.cleaner.rules import RetentionRules
from hmb.log.partition import PartitionLog
from hmb.log.scan import Entry, iter_entries
from hmb.log.segment import LogSegment
from hmb.log.time_lookup import segment_max_timestamp
from hmb.log.transactions import AbortedTxn
from kproto.records.compact import NO_HORIZON

if TYPE_CHECKING:
    from hmb.log.manager import LogManager

log = logging.getLogger(__name__)

CHECKPOINT_FILE = "cleaner-offset-checkpoint"


@dataclass
class CleanerState:
    """What the cleaner knows of one compacted partition (shown by the control API and ``hmb``)."""

    topic: str
    partition: int
    first_dirty_offset: int = 0
    dirty_ratio: float = 0.0
    last_clean_time_ms: int = -1
    cleanings: int = 0
    bytes_cleaned: int = 0  # bytes read by every cleaning of this partition
    bytes_removed: int = 0
    next_horizon_ms: int = NO_HORIZON  # when kept tombstones may go (a cleaning is due then)


@dataclass(frozen=True)
class Cleanable:
    """A partition's cleanable section, measured now."""

    first_dirty: int
    first_uncleanable: int
    clean_bytes: int
    dirty_bytes: int
    due_now: bool  # max.compaction.lag.ms or a passed delete horizon: whatever the ratio

    @property
    def ratio(self) -> float:
        total = self.clean_bytes + self.dirty_bytes
        return self.dirty_bytes / total if total else 0.0


def _first_timestamp(seg: LogSegment) -> int:
    """The first batch's largest timestamp (Kafka's "first batch timestamp"), else the file's age."""
    for entry in iter_entries(seg.fd, 0, seg.size, validate=False):
        if isinstance(entry, Entry) and entry.max_timestamp >= 0:
            return entry.max_timestamp
        break
    return int(seg.last_modified * 1000)


def measure(
    plog: PartitionLog,
    first_dirty: int,
    now_ms: int,
    next_horizon_ms: int = NO_HORIZON,
    first_unstable: int | None = None,
) -> Cleanable:
    """How much of ``plog`` is clean and dirty, and where its dirty section must stop.

    ``first_unstable``: the first offset of a transaction still open (Kafka's last stable
    offset), which a cleaning must not pass; None while the log has none.
    """
    segments = plog.segments.values()
    active = segments[-1]
    closed = segments[:-1]
    start = plog.log_start_offset
    if not start <= first_dirty <= active.base_offset:
        first_dirty = start
    cfg = plog.config
    uncleanable = active.base_offset
    if first_unstable is not None:  # only whole segments below it are cleanable
        below = [seg.base_offset for seg in segments if seg.base_offset <= first_unstable]
        uncleanable = min(uncleanable, below[-1] if below else start)
    bases = [seg.base_offset for seg in segments]
    clean = dirty = 0
    first_dirty_seg: LogSegment | None = None
    for i, seg in enumerate(closed):
        if bases[i + 1] <= first_dirty:
            clean += seg.size
            continue
        if cfg.min_compaction_lag_ms > 0 and seg.base_offset < uncleanable:
            newest = segment_max_timestamp(seg)
            newest = newest if newest >= 0 else int(seg.last_modified * 1000)
            if newest > now_ms - cfg.min_compaction_lag_ms:
                uncleanable = seg.base_offset
        if seg.base_offset < uncleanable:
            dirty += seg.size
            first_dirty_seg = first_dirty_seg or seg
    due = next_horizon_ms != NO_HORIZON and now_ms >= next_horizon_ms
    if first_dirty_seg is not None and cfg.max_compaction_lag_ms < 2**63 - 1:
        due = due or now_ms - _first_timestamp(first_dirty_seg) > cfg.max_compaction_lag_ms
    return Cleanable(first_dirty, max(first_dirty, uncleanable), clean, dirty, due)


def _legacy_horizon(segments: list[LogSegment], first_dirty: int, retention_ms: int, active_base: int) -> int:
    """Kafka's horizon for MessageSet tombstones: when the clean part was last modified,
    less ``delete.retention.ms`` (0 less it while nothing is clean yet)."""
    next_bases = [seg.base_offset for seg in segments[1:]] + [active_base]
    clean = [seg for seg, nxt in zip(segments, next_bases, strict=True) if nxt <= first_dirty]
    return (int(clean[-1].last_modified * 1000) if clean else 0) - retention_ms


class LogCleaner:
    """Cleans the compacted partitions of a :class:`~hmb.log.manager.LogManager`."""

    def __init__(
        self,
        logs: LogManager,
        *,
        threads: int = 1,
        dedupe_buffer_size: int = 128 << 20,
        io_max_bytes_per_second: float = 1.7976931348623157e308,
        backoff_ms: int = 15_000,
        now_ms: Callable[[], int] | None = None,
    ) -> None:
        self.logs = logs
        self.threads = threads
        self.map_slots = slots_for(dedupe_buffer_size, max(threads, 1))
        self.backoff_s = backoff_ms / 1000
        self.now_ms = now_ms or (lambda: int(logs.wall() * 1000))
        self._stop = threading.Event()
        self.throttle = Throttle(io_max_bytes_per_second, self._stop)
        self.states: dict[tuple[str, int], CleanerState] = {}
        self._busy: set[tuple[str, int]] = set()
        self._owners: dict[tuple[str, int], PartitionLog] = {}  # whose state each entry is
        #: the first offset of a still open transaction of a partition (None: none open),
        #: which the dirty section stops before, as Kafka's does
        self.first_unstable_offset: Callable[[PartitionLog], int | None] = _first_unstable_offset
        self._finished: trio.Event | None = None  # set when a cleaning ends (clean_all waits on it)
        self._loaded = False

    # ---------------------------------------------------------------- state

    def _load_checkpoints(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        for log_dir in self.logs.log_dirs:
            for (topic, partition), offset in start_offsets.read(log_dir, CHECKPOINT_FILE).items():
                self.states[(topic, partition)] = CleanerState(topic, partition, offset)

    def _write_checkpoint(self, log_dir: Path) -> None:
        rows = [
            (plog.topic, plog.partition, self.states[(plog.topic, plog.partition)].first_dirty_offset)
            for plog in self.logs.all_logs()
            if plog.directory.parent == log_dir and (plog.topic, plog.partition) in self.states
        ]
        start_offsets.write(log_dir, rows, CHECKPOINT_FILE)

    def _state(self, plog: PartitionLog) -> CleanerState:
        key = (plog.topic, plog.partition)
        state = self.states.get(key)
        owner = self._owners.setdefault(key, plog)
        if state is None or owner is not plog:  # new, or a topic deleted and made again
            self._owners[key] = plog
            state = self.states[key] = CleanerState(plog.topic, plog.partition, plog.log_start_offset)
        return state

    def _measure(self, plog: PartitionLog, state: CleanerState, now_ms: int) -> Cleanable:
        unstable = self.first_unstable_offset(plog)
        return measure(plog, state.first_dirty_offset, now_ms, state.next_horizon_ms, unstable)

    def state(self) -> list[dict[str, Any]]:
        """Every compacted partition's cleaner state, its dirty ratio measured now."""
        self._load_checkpoints()
        now = self.now_ms()
        out = []
        for plog in self.logs.all_logs():
            if not plog.config.compact or not plog.loaded or plog.deleted:
                continue
            state = self._state(plog)
            state.dirty_ratio = self._measure(plog, state, now).ratio
            out.append(asdict(state))
        return out

    # ---------------------------------------------------------------- choosing

    def _filthiest(self) -> tuple[PartitionLog, Cleanable] | None:
        self._load_checkpoints()
        now = self.now_ms()
        best: tuple[float, PartitionLog, Cleanable] | None = None
        for plog in self.logs.all_logs():
            key = (plog.topic, plog.partition)
            if not plog.config.compact or plog.deleted or not plog.loaded or key in self._busy:
                continue
            state = self._state(plog)
            found = self._measure(plog, state, now)
            state.dirty_ratio = found.ratio
            wanted = found.dirty_bytes > 0 and found.ratio >= plog.config.min_cleanable_dirty_ratio
            if not (wanted or found.due_now):
                continue
            rank = 2.0 if found.due_now else found.ratio
            if best is None or rank > best[0]:
                best = (rank, plog, found)
        return None if best is None else (best[1], best[2])

    # ---------------------------------------------------------------- running

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """``log.cleaner.threads`` cleaners, each sleeping ``log.cleaner.backoff.ms`` when idle."""
        self._stop.clear()  # a broker run again after a stop cleans again
        try:
            async with trio.open_nursery() as nursery:
                for i in range(self.threads):
                    nursery.start_soon(self._thread, i)
                task_status.started()
        finally:
            self._stop.set()

    async def _thread(self, thread_id: int) -> None:
        while True:
            if not await self.clean_one(thread_id):
                await trio.sleep(self.backoff_s)

    async def clean_all(self) -> int:
        """Clean every partition that needs it now, one after another (tests, the control API);
        a partition a cleaner thread is cleaning meanwhile is waited for, then looked at again."""
        done = 0
        while True:
            if await self.clean_one(0):
                done += 1
            elif self._busy:
                self._finished = self._finished or trio.Event()
                await self._finished.wait()
            else:
                return done

    async def clean_one(self, thread_id: int = 0) -> bool:
        """Clean the dirtiest partition that needs it; False when none does."""
        picked = self._filthiest()
        if picked is None:
            return False
        plog, found = picked
        key = (plog.topic, plog.partition)
        self._busy.add(key)
        try:
            await self._clean(plog, found, thread_id)
        except CleanerStoppedError:  # the broker is stopping
            return False
        except OSError as exc:  # a full or failing disk, or the topic deleted under us
            log.error("cleaning %s-%d failed: %s", plog.topic, plog.partition, exc)
            return False  # the thread backs off before trying again
        finally:
            self._busy.discard(key)
            finished, self._finished = self._finished, None
            if finished is not None:
                finished.set()
        return True

    async def _clean(self, plog: PartitionLog, found: Cleanable, thread_id: int) -> None:
        started = time.monotonic()
        state = self._state(plog)
        cfg = plog.config
        now = self.now_ms()
        segments = plog.segments.values()[:-1]  # never the active one
        offsets = OffsetMap(self.map_slots)
        rules = RetentionRules(
            offsets,
            now,
            cfg.delete_retention_ms,
            _legacy_horizon(segments, found.first_dirty, cfg.delete_retention_ms, plog.active.base_offset),
            {pid: e.batches[-1].last_offset for pid, e in plog.producers.producers.items() if e.batches},
            aborted_records(plog.txns.aborted),
        )
        with contextlib.ExitStack() as pins:
            for seg in segments:
                pins.enter_context(seg.pinned())
            end = await self._in_thread(
                rewrite.build_offset_map,
                segments,
                found.first_dirty,
                found.first_uncleanable,
                offsets,
                self.throttle,
                rules.aborted,
            )
            targets = [seg for seg in segments if seg.base_offset < end]
            groups = rewrite.group_segments(targets, cfg.segment_bytes, cfg.index_max_bytes)
            totals = GroupResult(-1)
            for group in groups:
                try:
                    result = await self._in_thread(
                        rewrite.write_cleaned,
                        plog.directory,
                        group,
                        rules,
                        self.throttle,
                        cfg.index_interval_bytes,
                        cfg.index_max_bytes,
                    )
                    await self._install(plog, group)
                except BaseException:
                    # Not swapped in: its files go (an abandoned thread checks the stop flag
                    # before it commits, and a broker start rolls back what is left).
                    with contextlib.suppress(OSError):
                        swap.abandon(plog.directory, group[0].base_offset)
                    raise
                for name in ("bytes_read", "bytes_written", "records_read", "records_kept"):
                    setattr(totals, name, getattr(totals, name) + getattr(result, name))
        state.first_dirty_offset = max(end, found.first_dirty)
        state.next_horizon_ms = rules.next_horizon_ms
        state.last_clean_time_ms = self.now_ms()
        state.cleanings += 1
        state.bytes_cleaned += totals.bytes_read
        state.bytes_removed += totals.bytes_read - totals.bytes_written
        state.dirty_ratio = self._measure(plog, state, now).ratio
        await trio.to_thread.run_sync(self._write_checkpoint, plog.directory.parent)
        self._log_cleaning(plog, thread_id, found, end, totals, time.monotonic() - started)

    async def _in_thread(self, fn: Callable[..., Any], *args: Any) -> Any:
        try:
            return await trio.to_thread.run_sync(fn, *args, abandon_on_cancel=True)
        except trio.Cancelled:
            self._stop.set()  # the abandoned thread stops at its next entry
            raise

    async def _install(self, plog: PartitionLog, group: list[LogSegment]) -> None:
        """Swap the cleaned segment in for ``group``, under the partition's lock."""
        base = group[0].base_offset
        async with plog.exclusive():
            current = plog.segments
            if plog.deleted or any(
                seg.base_offset not in current or current[seg.base_offset] is not seg for seg in group
            ):  # retention, DeleteRecords or DeleteTopics got there first
                swap.abandon(plog.directory, base)
                return
            for seg in group:
                seg.delete()
            swap.rename_in(plog.directory, base)
            cfg = plog.config
            cleaned = LogSegment(
                plog.directory,
                base,
                index_interval_bytes=cfg.index_interval_bytes,
                index_max_bytes=cfg.index_max_bytes,
            )
            cleaned.load_tail(cfg.max_message_bytes + (1 << 20) + cfg.segment_bytes)
            for seg in group:
                current.popitem(current.bisect_right(seg.base_offset) - 1)
            current[base] = cleaned

    def _log_cleaning(
        self, plog: PartitionLog, thread_id: int, found: Cleanable, end: int, r: GroupResult, seconds: float
    ) -> None:
        mb_in, mb_out = r.bytes_read / 1e6, r.bytes_written / 1e6
        log.info(
            "Log cleaner thread %d cleaned log %s-%d (dirty section = [%d, %d]): %.1f MB of log "
            "processed in %.1f seconds (%.1f MB/sec); start size %.1f MB (%d messages), end size "
            "%.1f MB (%d messages), %.1f%% size reduction (%.1f%% fewer messages); dirty ratio was %.2f",
            thread_id,
            plog.topic,
            plog.partition,
            found.first_dirty,
            end,
            mb_in,
            seconds,
            mb_in / seconds if seconds > 0 else 0.0,
            mb_in,
            r.records_read,
            mb_out,
            r.records_kept,
            100 * (1 - mb_out / mb_in) if mb_in else 0.0,
            100 * (1 - r.records_kept / r.records_read) if r.records_read else 0.0,
            found.ratio,
        )


def _first_unstable_offset(plog: PartitionLog) -> int | None:
    return plog.txns.first_unstable_offset()


def aborted_records(aborted: Sequence[AbortedTxn]) -> Callable[[int, int], bool]:
    """Whether a record (producer id, offset) lies in one of ``aborted``'s transactions.

    Built on the event loop from a copy, asked from the cleaning's worker
    thread: the partition's list may grow meanwhile.
    """
    ranges: dict[int, list[tuple[int, int]]] = {}
    for txn in aborted:
        ranges.setdefault(txn.producer_id, []).append((txn.first_offset, txn.last_offset))
    firsts = {pid: [first for first, _ in spans] for pid, spans in ranges.items()}

    def is_aborted(producer_id: int, offset: int) -> bool:
        spans = ranges.get(producer_id)
        if spans is None:
            return False
        i = bisect.bisect_right(firsts[producer_id], offset) - 1
        return i >= 0 and offset <= spans[i][1]

    return is_aborted
