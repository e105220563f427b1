"""The rAck monitor's circular list of backups on its own (pure).

What can fail here: a confirmed slot not reused, an unconfirmed backup resent
on its first visit or never, the walk not resuming where it stopped, the list
not growing while receipts lag (or growing past its bound), a receipt that
comes before its backup lost, leftovers not handed over at the end.
"""

from __future__ import annotations

import pytest

from hmb_client.rack.backups import Backup, CircularBackups


def _b(i: int, topic: str = "t") -> Backup:
    return Backup(topic, str(i), b"v%d" % i)


def test_a_full_list_reuses_confirmed_slots_first() -> None:
    ring = CircularBackups(3, max_slots=3)
    for i in range(3):
        assert ring.add(_b(i)) == []
    assert ring.confirm("t", "1") and ring.unconfirmed == 2
    assert ring.add(_b(3)) == []  # 0 aged, 1 confirmed: taken
    assert len(ring) == 3 and ring.unconfirmed == 3


def test_an_unconfirmed_backup_is_resent_on_its_second_visit() -> None:
    ring = CircularBackups(2, max_slots=2)
    ring.add(_b(0))
    ring.add(_b(1))
    assert ring.add(_b(2)) == [_b(0)]  # 0 and 1 aged on the first lap, 0 lost on the second
    assert ring.lost_on_walk == 1
    assert ring.add(_b(3)) == [_b(1)]  # the walk resumes after the slot it filled
    assert not ring.confirm("t", "0")  # handed over: the receipt no longer matters
    assert ring.confirm("t", "2") and ring.confirm("t", "3") and ring.unconfirmed == 0


def test_the_list_grows_while_most_slots_wait_and_stops_at_its_bound() -> None:
    ring = CircularBackups(4, max_slots=9)
    lost = [b for i in range(9) for b in ring.add(_b(i))]
    assert lost == [] and len(ring) == 9 and ring.capacity == 9  # 4 -> 6 -> 9
    lost = ring.add(_b(9))  # at its bound: back to walking
    assert ring.capacity == 9 and ring.unconfirmed == 9
    assert lost == [_b(0)]


def test_a_list_mostly_confirmed_does_not_grow() -> None:
    ring = CircularBackups(4, max_slots=100)
    for i in range(4):
        ring.add(_b(i))
        ring.confirm("t", str(i))
    ring.add(_b(4))
    assert ring.capacity == 4


def test_a_receipt_before_its_backup_confirms_it_on_arrival() -> None:
    ring = CircularBackups(4)
    assert not ring.confirm("t", "5")
    ring.add(_b(5))
    assert ring.unconfirmed == 0
    ring.add(_b(5, topic="other"))  # the same id on another topic is another record
    assert ring.unconfirmed == 1


def test_take_unconfirmed_hands_over_every_waiting_backup_once() -> None:
    ring = CircularBackups(8)
    for i in range(5):
        ring.add(_b(i))
    ring.confirm("t", "3")
    assert sorted(b.id for b in ring.take_unconfirmed()) == ["0", "1", "2", "4"]
    assert ring.unconfirmed == 0 and ring.take_unconfirmed() == []


def test_bad_sizes_are_refused() -> None:
    with pytest.raises(ValueError):
        CircularBackups(0)
    with pytest.raises(ValueError):
        CircularBackups(10, max_slots=5)
