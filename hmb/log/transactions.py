"""The transactions of one partition: which are open, which were aborted, and the LSO.

Rules of this module:

* A transactional batch of a producer opens that producer's transaction on
  the partition at the batch's first offset, or continues the one already
  open; a marker (a control batch, :mod:`kproto.records.control`) ends it.
  At most one transaction per producer is open on a partition.
* The last stable offset (LSO) is the first offset of the earliest open
  transaction, or the high watermark when none is open: a read_committed
  reader never reads at or beyond it, so it never sees a record whose fate
  is undecided.
* An ABORT marker records an :class:`AbortedTxn` (producer id, first and
  last offset, the LSO once it ended): Fetch lists those overlapping what it
  returns, and read_committed consumers drop that producer's records from
  the first offset up to the marker.  As Kafka does, a marker for a
  producer with no open transaction still records one, starting at the
  marker itself (it then hides nothing).
* Aborted transactions are kept in the order of their markers, i.e. of
  their last offsets; the files that hold them (``.txnindex``, one per
  segment) are :mod:`hmb.log.txn_index`'s business.
"""

from __future__ import annotations

import bisect
from typing import NamedTuple


class AbortedTxn(NamedTuple):
    """One aborted transaction, as Kafka's ``.txnindex`` entries hold it."""

    producer_id: int
    first_offset: int
    last_offset: int  # the offset of its ABORT marker
    last_stable_offset: int  # the partition's LSO once the marker was written


def _last_offset(entry: AbortedTxn) -> int:
    return entry.last_offset


class PartitionTransactions:
    """Open transactions (producer id -> first offset) and aborted ones, of one partition."""

    __slots__ = ("aborted", "ongoing")

    def __init__(self) -> None:
        self.ongoing: dict[int, int] = {}
        self.aborted: list[AbortedTxn] = []

    def begin(self, producer_id: int, offset: int) -> None:
        """A transactional batch of ``producer_id`` at ``offset``: opens its transaction if none is."""
        if producer_id not in self.ongoing:
            self.ongoing[producer_id] = offset

    def first_unstable_offset(self) -> int | None:
        """The first offset of the earliest open transaction (None: none is open)."""
        ongoing = self.ongoing
        return min(ongoing.values()) if ongoing else None

    def complete(self, producer_id: int, marker_offset: int, *, commit: bool) -> AbortedTxn | None:
        """A marker of ``producer_id`` at ``marker_offset`` ends its transaction.

        Returns the :class:`AbortedTxn` an ABORT records (None for a COMMIT),
        already added to :attr:`aborted`.
        """
        if commit:
            self.ongoing.pop(producer_id, None)
            return None
        entry = self.aborted_by(producer_id, marker_offset)
        self.ongoing.pop(producer_id, None)
        self.add_aborted(entry)
        return entry

    def aborted_by(self, producer_id: int, marker_offset: int) -> AbortedTxn:
        """What an ABORT marker of ``producer_id`` at ``marker_offset`` would record (no change)."""
        first = self.ongoing.get(producer_id, marker_offset)
        lso = min((f for p, f in self.ongoing.items() if p != producer_id), default=marker_offset + 1)
        return AbortedTxn(producer_id, first, marker_offset, lso)

    def add_aborted(self, entry: AbortedTxn) -> None:
        """Keep ``entry`` among the aborted transactions, in marker order."""
        if not self.aborted or self.aborted[-1].last_offset <= entry.last_offset:
            self.aborted.append(entry)
        else:
            bisect.insort(self.aborted, entry, key=_last_offset)

    def aborted_in(self, fetch_offset: int, upper_offset: int) -> list[tuple[int, int]]:
        """(producer id, first offset) of the aborted transactions overlapping
        ``[fetch_offset, upper_offset)``, in marker order, as Fetch lists them.

        The walk stops, as Kafka's does, at the first transaction that ended
        when the LSO was already at or past ``upper_offset``: every later one
        began after that.
        """
        aborted = self.aborted
        if not aborted:
            return []
        out = []
        for i in range(bisect.bisect_left(aborted, fetch_offset, key=_last_offset), len(aborted)):
            entry = aborted[i]
            if entry.first_offset < upper_offset:
                out.append((entry.producer_id, entry.first_offset))
            if entry.last_stable_offset >= upper_offset:
                break
        return out

    def forget_before(self, offset: int) -> None:
        """Drop the aborted transactions whose marker is below ``offset`` (their segment is gone)."""
        aborted = self.aborted
        if aborted and aborted[0].last_offset < offset:
            del aborted[: bisect.bisect_left(aborted, offset, key=_last_offset)]
