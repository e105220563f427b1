"""The monitor's circular list of backups, with an age per slot.

Rules (the rAck design's list, with its growth made explicit):

* The list holds up to ``slots`` backups (15,000 by default).  While it is
  not full a new backup takes a new slot at the end.
* A receipt marks its backup's slot confirmed (found through an index by
  (topic, id), not by walking the list).
* When the list is full, a new backup walks from where the last walk stopped:
  a confirmed slot is replaced at once; an unconfirmed slot seen for the
  first time has its age raised and the walk goes on; an unconfirmed slot
  seen for the second time is taken as lost: its backup is handed back to be
  resent, and the new backup takes the slot.  The time the walk needs to come
  round twice is what "no receipt came" means.
* The list may grow: when a full list has more than ``grow_above`` of its
  slots unconfirmed, receipts are late rather than lost (a burst, a slow
  ZooKeeper), so the list grows by half, up to ``max_slots``, instead of
  resending records that will still be confirmed.
* A receipt that arrives before its backup (a monitor fed over the network)
  is kept, a bounded number of them, and confirms the backup when it comes.

Not thread-safe: the monitor holds its lock around every call.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

__all__ = ["Backup", "CircularBackups"]


@dataclass(slots=True)
class Backup:
    """A copy of one record sent with rAck, enough to send it again."""

    topic: str
    id: str
    value: bytes | None
    key: bytes | None = None
    headers: list[tuple[str, bytes]] = field(default_factory=list)
    partition: int | None = None
    timestamp_ms: int | None = None


class _Slot:
    __slots__ = ("age", "backup", "confirmed")

    def __init__(self, backup: Backup) -> None:
        self.backup = backup
        self.confirmed = False
        self.age = 0


class CircularBackups:
    """Backups awaiting their receipts; :meth:`add` returns the ones taken as lost."""

    def __init__(
        self,
        slots: int = 15_000,
        *,
        max_slots: int = 1_000_000,
        grow_above: float = 0.5,
        early: int = 100_000,
    ) -> None:
        if slots < 1 or max_slots < slots:
            raise ValueError("the list needs at least one slot, and max_slots >= slots")
        self.capacity = slots
        self.max_slots = max_slots
        self.grow_above = grow_above
        self._ring: list[_Slot] = []
        self._pointer = 0
        self._index: dict[tuple[str, str], _Slot] = {}
        self._early: OrderedDict[tuple[str, str], None] = OrderedDict()
        self._early_limit = early
        self.unconfirmed = 0
        #: backups handed back as lost by the walk (second visit), over the list's life
        self.lost_on_walk = 0

    def __len__(self) -> int:
        return len(self._ring)

    def _store(self, slot: _Slot, backup: Backup) -> None:
        key = (backup.topic, backup.id)
        slot.backup = backup
        slot.age = 0
        if key in self._early:
            del self._early[key]
            slot.confirmed = True
        else:
            slot.confirmed = False
            self.unconfirmed += 1
            self._index[key] = slot

    def add(self, backup: Backup) -> list[Backup]:
        """Keep ``backup``; the backups its walk found unconfirmed twice (to resend)."""
        ring = self._ring
        if len(ring) >= self.capacity and self._should_grow():
            self.capacity = min(self.max_slots, self.capacity + max(1, self.capacity // 2))
        if len(ring) < self.capacity:
            slot = _Slot(backup)
            ring.append(slot)
            self._store(slot, backup)
            return []
        lost: list[Backup] = []
        n = len(ring)
        while True:
            slot = ring[self._pointer]
            self._pointer = (self._pointer + 1) % n
            if slot.confirmed:
                break
            if slot.age > 0:
                old = slot.backup
                self._index.pop((old.topic, old.id), None)
                self.unconfirmed -= 1
                self.lost_on_walk += 1
                lost.append(old)
                break
            slot.age += 1
        self._store(slot, backup)
        return lost

    def _should_grow(self) -> bool:
        return self.capacity < self.max_slots and self.unconfirmed > self.grow_above * len(self._ring)

    def confirm(self, topic: str, rid: str) -> bool:
        """Mark the backup of (topic, id) received; False when none waits for it."""
        key = (topic, rid)
        slot = self._index.pop(key, None)
        if slot is None:
            self._early[key] = None
            if len(self._early) > self._early_limit:
                self._early.popitem(last=False)
            return False
        slot.confirmed = True
        self.unconfirmed -= 1
        return True

    def take_unconfirmed(self) -> list[Backup]:
        """Every backup still waiting, removed from the waiting (the caller resends them)."""
        out = []
        for slot in self._ring:
            if not slot.confirmed:
                out.append(slot.backup)
                slot.confirmed = True  # handed over: a resend now answers for it
        self._index.clear()
        self.unconfirmed = 0
        return out
