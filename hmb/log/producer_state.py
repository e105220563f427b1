"""Idempotent-producer state of one partition: Kafka's ProducerStateManager, in small.

An idempotent producer numbers its batches per partition (base sequence,
record count) under a producer id and epoch from InitProducerId.  For every
producer the partition remembers its epoch and its last five batches
(sequence range -> offsets), which lets the broker

* acknowledge a retried batch it already has with the *original* offsets,
  without appending it again (the duplicate Kafka's idempotence removes);
* refuse a batch whose first sequence does not follow the last one
  (:class:`~hmb.log.errors.OutOfOrderSequenceError`, so the producer does
  not leave a gap);
* refuse batches of an older epoch
  (:class:`~hmb.log.errors.InvalidProducerEpochError`, a fenced producer).

The rules are Kafka's (``ProducerAppendInfo.checkSequence``): a producer the
partition knows nothing about (new, or its batches deleted by retention) may
start at any sequence; a new epoch must start at sequence 0; sequences wrap
from 2**31-1 to 0.  The state is rebuilt from the log's batch headers on
start, so it survives a restart: from the batch headers of the last
segments after a crash, from the snapshot written at a clean shutdown
otherwise (as Kafka's ``.snapshot`` files, so a clean start reads no
segment through).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from hmb.log.errors import InvalidProducerEpochError, OutOfOrderSequenceError, ProducerSequenceError

NO_PRODUCER_ID = -1
MAX_CACHED_BATCHES = 5  # Kafka's ProducerStateEntry.NumBatchesToRetain
_INT32_MAX = 2**31 - 1


@dataclass(frozen=True)
class BatchMeta:
    """The sequence and offset range of one batch a producer wrote: a retried batch is found by it."""

    first_seq: int
    last_seq: int
    first_offset: int
    last_offset: int


@dataclass
class ProducerEntry:
    """What a partition keeps per idempotent producer: its epoch and its last batches."""

    epoch: int
    batches: deque[BatchMeta] = field(default_factory=lambda: deque(maxlen=MAX_CACHED_BATCHES))
    coordinator_epoch: int = -1  # of the last transaction marker written for it (-1: none)

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else -1


@dataclass(frozen=True)
class SequenceCheck:
    """Outcome of checking a batch: the refusal to raise, or a duplicate's original offsets."""

    error: type[ProducerSequenceError] | None = None
    duplicate: BatchMeta | None = None


def last_sequence(first_seq: int, record_count: int) -> int:
    """Sequence of the last record of a batch, wrapping like Kafka's."""
    return (first_seq + record_count - 1) % (_INT32_MAX + 1)


def _in_sequence(last_seq: int, next_seq: int) -> bool:
    return next_seq == last_seq + 1 or (last_seq == _INT32_MAX and next_seq == 0)


class ProducerStateManager:
    """Per-producer sequence state of one partition."""

    __slots__ = ("producers",)

    def __init__(self) -> None:
        self.producers: dict[int, ProducerEntry] = {}

    def check(self, producer_id: int, epoch: int, first_seq: int, record_count: int) -> SequenceCheck:
        """May this batch be appended?  (Does not change the state.)"""
        if producer_id == NO_PRODUCER_ID:
            return SequenceCheck()
        entry = self.producers.get(producer_id)
        if entry is None:
            return SequenceCheck()
        if epoch < entry.epoch:
            return SequenceCheck(InvalidProducerEpochError)
        last_seq = last_sequence(first_seq, record_count)
        if epoch == entry.epoch:
            for meta in entry.batches:
                if meta.first_seq == first_seq and meta.last_seq == last_seq:
                    return SequenceCheck(duplicate=meta)
            if entry.batches and not _in_sequence(entry.last_seq, first_seq):
                return SequenceCheck(OutOfOrderSequenceError)
            return SequenceCheck()
        if first_seq != 0:  # a bumped epoch starts again at 0
            return SequenceCheck(OutOfOrderSequenceError)
        return SequenceCheck()

    def record(
        self,
        producer_id: int,
        epoch: int,
        first_seq: int,
        record_count: int,
        first_offset: int,
        last_offset: int,
    ) -> None:
        """Remember an appended batch (after :meth:`check` passed)."""
        if producer_id == NO_PRODUCER_ID:
            return
        entry = self.producers.get(producer_id)
        if entry is None or epoch > entry.epoch:
            entry = self.producers[producer_id] = ProducerEntry(epoch)
        entry.batches.append(
            BatchMeta(first_seq, last_sequence(first_seq, record_count), first_offset, last_offset)
        )

    def check_marker(self, producer_id: int, epoch: int) -> type[ProducerSequenceError] | None:
        """May a transaction marker of ``epoch`` be written for ``producer_id``?  (No change.)

        Only an older epoch than the producer's is refused (a fenced
        producer's transaction was already ended by the newer epoch).
        """
        entry = self.producers.get(producer_id)
        if entry is not None and epoch < entry.epoch:
            return InvalidProducerEpochError
        return None

    def end_transaction(self, producer_id: int, epoch: int, coordinator_epoch: int = -1) -> None:
        """A marker of ``epoch`` was written: the producer is at that epoch from now on.

        A newer epoch than the producer's (the coordinator bumped it while
        ending the transaction) forgets its batches: its next one starts at
        sequence 0.
        """
        entry = self.producers.get(producer_id)
        if entry is None or epoch > entry.epoch:
            entry = self.producers[producer_id] = ProducerEntry(epoch)
        entry.coordinator_epoch = coordinator_epoch

    # ---------------------------------------------------------------- snapshots

    def snapshot(self) -> dict[str, list[Any]]:
        """The state as JSON-ready data: producer id -> [epoch, [batch, ...], coordinator epoch]."""
        return {
            str(pid): [
                e.epoch,
                [[b.first_seq, b.last_seq, b.first_offset, b.last_offset] for b in e.batches],
                e.coordinator_epoch,
            ]
            for pid, e in self.producers.items()
        }

    @classmethod
    def restore(cls, data: dict[str, list[Any]]) -> ProducerStateManager:
        """The state :meth:`snapshot` returned (ValueError/TypeError/KeyError when it is not that)."""
        state = cls()
        for pid, (epoch, batches, *rest) in data.items():  # snapshots before transactions: no rest
            coordinator_epoch = int(rest[0]) if rest else -1
            entry = state.producers[int(pid)] = ProducerEntry(int(epoch), coordinator_epoch=coordinator_epoch)
            entry.batches.extend(BatchMeta(*map(int, b)) for b in batches)
        return state
