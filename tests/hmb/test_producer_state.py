"""Idempotent-producer sequence rules (Kafka's ProducerAppendInfo.checkSequence)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from hmb.log.errors import InvalidProducerEpochError, OutOfOrderSequenceError
from hmb.log.producer_state import MAX_CACHED_BATCHES, ProducerStateManager, last_sequence


def test_in_order_batches_are_accepted_and_a_retry_is_a_duplicate() -> None:
    s = ProducerStateManager()
    assert s.check(7, 0, 0, 10).error is None
    s.record(7, 0, 0, 10, first_offset=100, last_offset=109)
    assert s.check(7, 0, 10, 5).error is None
    s.record(7, 0, 10, 5, first_offset=110, last_offset=114)
    dup = s.check(7, 0, 0, 10)
    assert dup.error is None and dup.duplicate is not None
    assert (dup.duplicate.first_offset, dup.duplicate.last_offset) == (100, 109)


def test_a_gap_is_out_of_order() -> None:
    s = ProducerStateManager()
    s.record(7, 0, 0, 10, 0, 9)
    assert s.check(7, 0, 11, 1).error is OutOfOrderSequenceError
    assert s.check(7, 0, 5, 1).error is OutOfOrderSequenceError  # overlaps, not a known batch


def test_only_the_last_five_batches_are_remembered() -> None:
    s = ProducerStateManager()
    for i in range(MAX_CACHED_BATCHES + 1):
        s.record(1, 0, i, 1, i, i)
    assert s.check(1, 0, MAX_CACHED_BATCHES, 1).duplicate is not None
    assert s.check(1, 0, 0, 1).duplicate is None  # too old to recognise
    assert s.check(1, 0, 0, 1).error is OutOfOrderSequenceError


def test_epochs_fence_and_restart_sequences() -> None:
    s = ProducerStateManager()
    s.record(1, 3, 0, 4, 0, 3)
    assert s.check(1, 2, 4, 1).error is InvalidProducerEpochError
    assert s.check(1, 4, 4, 1).error is OutOfOrderSequenceError
    assert s.check(1, 4, 0, 1).error is None
    s.record(1, 4, 0, 1, 4, 4)
    assert s.check(1, 3, 4, 1).error is InvalidProducerEpochError


def test_unknown_producers_and_non_idempotent_batches_pass() -> None:
    s = ProducerStateManager()
    assert s.check(99, 0, 12345, 3).error is None  # state lost to retention: any sequence
    assert s.check(-1, -1, -1, 10).error is None
    s.record(-1, -1, -1, 10, 0, 9)
    assert s.producers == {}


def test_sequences_wrap_like_kafkas() -> None:
    s = ProducerStateManager()
    s.record(5, 0, 2**31 - 3, 3, 0, 2)
    assert last_sequence(2**31 - 3, 3) == 2**31 - 1
    assert s.check(5, 0, 0, 1).error is None
    assert s.check(5, 0, 1, 1).error is OutOfOrderSequenceError


@given(st.lists(st.integers(1, 50), min_size=1, max_size=30))
def test_a_producer_retrying_any_recent_batch_gets_its_offsets(counts: list[int]) -> None:
    s = ProducerStateManager()
    seq, offset, batches = 0, 0, []
    for n in counts:
        assert s.check(3, 0, seq, n).error is None
        s.record(3, 0, seq, n, offset, offset + n - 1)
        batches.append((seq, n, offset))
        seq, offset = seq + n, offset + n
    for first, n, off in batches[-MAX_CACHED_BATCHES:]:
        dup = s.check(3, 0, first, n).duplicate
        assert dup is not None and dup.first_offset == off
