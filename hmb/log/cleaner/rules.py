"""Which records and batches a cleaning keeps: every retention rule of the cleaner, in one place.

A cleaning passes each entry of the segments it rewrites through
:class:`RetentionRules`, built once per cleaning from the key map and the
times that matter.  The rules, as Kafka's cleaner applies them:

=====================================  =================================================
record or batch                        kept when
=====================================  =================================================
record without a key                   never (a compacted log cannot say which is latest)
record of an aborted transaction       never (``aborted`` says which; see below)
keyed record                           it is the latest of its key the map has seen,
                                       or the map has not seen the key (beyond its end)
tombstone (null value), RecordBatch    until the delete horizon stamped on its batch at
                                       the first cleaning that kept it has passed
tombstone, MessageSet (magic 0/1)      while its segment was modified after the legacy
                                       horizon: the clean part's last modification
                                       minus ``delete.retention.ms``
batch left with no record              dropped, unless it is its producer's last batch:
                                       then it stays empty, its header keeping the
                                       producer's epoch and last sequence
control batch (transaction marker)     always (see ``keep_control``)
=====================================  =================================================

Transactions: ``aborted(producer_id, offset)`` tells whether a data record
belongs to an aborted transaction (the cleaner builds it from the
partition's aborted transactions, :func:`hmb.log.cleaner.cleaner.aborted_records`),
and a cleaning stops before the first offset of a transaction still open
(``LogCleaner.first_unstable_offset``).  :meth:`RetentionRules.keep_control`
keeps every marker: Kafka removes one once no data of its transaction is
left before it and its delete horizon has passed; hmb keeps them, which
costs a few bytes per transaction and never changes what a reader sees.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from hmb.log.cleaner.offset_map import OffsetMap
from kproto.records.compact import NO_HORIZON, EntryInfo, RecordInfo


def _never_aborted(producer_id: int, offset: int) -> bool:
    return False


@dataclass
class RetentionRules:
    """The fate of each record and batch of one cleaning."""

    offsets: OffsetMap
    now_ms: int  # the broker's clock when the cleaning started
    delete_retention_ms: int
    legacy_horizon_ms: int  # MessageSet tombstones of segments modified before this go
    #: producer id -> offset of its last batch in the log (its batch stays even when emptied)
    producers_last: Mapping[int, int] = field(default_factory=dict)
    aborted: Callable[[int, int], bool] = _never_aborted
    #: what the current entry's segment was last modified (epoch ms), set per segment
    segment_modified_ms: int = 0
    #: the earliest delete horizon this cleaning stamped or kept (-1: none): when the log
    #: next needs cleaning to let tombstones go
    next_horizon_ms: int = NO_HORIZON

    @property
    def new_horizon_ms(self) -> int:
        """The delete horizon a RecordBatch keeping its first tombstone gets now."""
        return self.now_ms + self.delete_retention_ms

    def keep_control(self, info: EntryInfo) -> bool:
        """A control batch stays (see the module header)."""
        return True

    def keep_empty(self, info: EntryInfo) -> bool:
        """An emptied RecordBatch stays when it is its producer's last one in the log."""
        return info.producer_id >= 0 and self.producers_last.get(info.producer_id) == info.last_offset

    def record_keeper(self, info: EntryInfo) -> Callable[[RecordInfo], bool]:
        """The per-record decision for the records of the entry ``info`` describes."""
        offsets = self.offsets
        if info.magic >= 2:
            horizon = info.delete_horizon_ms
            tombstones_go = horizon != NO_HORIZON and self.now_ms >= horizon
        else:
            tombstones_go = self.segment_modified_ms <= self.legacy_horizon_ms
        aborted = self.aborted if info.transactional else None
        pid = info.producer_id

        def keep(record: RecordInfo) -> bool:
            key = record.key
            if key is None:
                return False
            if aborted is not None and aborted(pid, record.offset):
                return False
            if record.offset < offsets.get(key):
                return False
            return not (record.tombstone and tombstones_go)

        return keep

    def note_kept(self, info: EntryInfo, horizon_ms: int) -> None:
        """A kept batch carries tombstones until ``horizon_ms``: remember the earliest to come."""
        if horizon_ms > self.now_ms and (
            self.next_horizon_ms == NO_HORIZON or horizon_ms < self.next_horizon_ms
        ):
            self.next_horizon_ms = horizon_ms
