"""Transactions at the log: transactional batches open a producer's transaction,
markers end it, the last stable offset stops at the earliest open one, aborted
transactions are listed as Fetch needs them, and all of it survives a restart."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio
from hypothesis import given
from hypothesis import strategies as st

from hmb.log.config import LogConfig
from hmb.log.errors import InvalidProducerEpochError, OutOfOrderSequenceError, TransactionalBatchError
from hmb.log.partition import PartitionLog
from hmb.log.transactions import AbortedTxn, PartitionTransactions
from kproto.records import RecordBatchBuilder, RecordBatchReader
from kproto.records.control import parse_control_batch


def txn_batch(pid: int, epoch: int, seq: int, n: int, *, transactional: bool = True) -> bytes:
    b = RecordBatchBuilder(
        producer_id=pid, producer_epoch=epoch, base_sequence=seq, is_transactional=transactional
    )
    for i in range(n):
        b.append(None, b"p%d-s%d" % (pid, seq + i), 1_700_000_000_000)
    return b.build()


def plain(n: int = 1) -> bytes:
    b = RecordBatchBuilder()
    for i in range(n):
        b.append(None, b"plain-%d" % i, 1_700_000_000_000)
    return b.build()


def open_log(path: Path, *, clean: bool = True, config: LogConfig | None = None) -> PartitionLog:
    return PartitionLog.open(path, "t", 0, config or LogConfig(), clean=clean)


def batches(plog: PartitionLog) -> list[tuple[int, bool, int]]:
    """(base offset, is control, producer id) of every batch in the log."""
    with plog.read(plog.log_start_offset, 1 << 24) as region:
        data = region.read() if region is not None else b""
    return [
        (b.header.base_offset, b.header.is_control, b.header.producer_id) for b in RecordBatchReader(data)
    ]


def test_markers_move_the_lso_and_record_aborts(tmp_path: Path) -> None:
    async def main() -> None:
        plog = open_log(tmp_path / "t-0")
        await plog.append(plain(2))  # 0-1
        assert plog.last_stable_offset == plog.high_watermark == 2
        await plog.append(txn_batch(7, 0, 0, 3))  # 2-4: producer 7 opens at 2
        await plog.append(plain())  # 5
        await plog.append(txn_batch(8, 0, 0, 2))  # 6-7: producer 8 opens at 6
        await plog.append(txn_batch(7, 0, 3, 1))  # 8: continues 7's
        assert plog.ongoing_transactions() == {7: 2, 8: 6}
        assert (plog.last_stable_offset, plog.high_watermark) == (2, 9)

        commit_at = await plog.append_marker(7, 0, commit=True, coordinator_epoch=1)
        assert commit_at == 9 and plog.high_watermark == 10
        assert plog.last_stable_offset == 6, "8's transaction is still open"
        abort_at = await plog.append_marker(8, 0, commit=False, coordinator_epoch=1)
        assert abort_at == 10
        assert plog.ongoing_transactions() == {}
        assert plog.last_stable_offset == plog.high_watermark == 11
        assert plog.aborted_transactions(0, 11) == [(8, 6)]
        assert plog.aborted_transactions(11, 20) == [], "the abort ended before the range"
        assert plog.aborted_transactions(0, 6) == [], "the aborted transaction begins at the range's end"
        assert plog.txns.aborted == [AbortedTxn(8, 6, 10, 11)]

        assert batches(plog)[-2:] == [(9, True, 7), (10, True, 8)]
        with plog.read(9, 1 << 20) as region:
            assert region is not None
            first = region.read()
        marker = parse_control_batch(first)
        assert (marker.producer_id, marker.commit, marker.coordinator_epoch, marker.offset) == (7, True, 1, 9)
        plog.close()

    trio.run(main)


def test_marker_epochs_fence_and_bump(tmp_path: Path) -> None:
    async def main() -> None:
        plog = open_log(tmp_path / "t-0")
        await plog.append(txn_batch(3, 2, 0, 1))
        with pytest.raises(InvalidProducerEpochError):
            await plog.append_marker(3, 1, commit=True, coordinator_epoch=0)
        assert plog.high_watermark == 1 and plog.ongoing_transactions() == {3: 0}, "nothing written"
        # the coordinator ends the transaction with a bumped epoch: the old one is fenced
        await plog.append_marker(3, 3, commit=False, coordinator_epoch=0)
        with pytest.raises(InvalidProducerEpochError):
            await plog.append(txn_batch(3, 2, 1, 1))
        await plog.append(txn_batch(3, 3, 0, 1))  # the new epoch starts at sequence 0
        assert plog.ongoing_transactions() == {3: 2}
        plog.close()

    trio.run(main)


def test_marker_without_a_transaction_is_written(tmp_path: Path) -> None:
    async def main() -> None:
        plog = open_log(tmp_path / "t-0")
        await plog.append(plain())
        assert await plog.append_marker(42, 0, commit=True, coordinator_epoch=0) == 1
        assert await plog.append_marker(42, 0, commit=False, coordinator_epoch=0) == 2
        assert plog.last_stable_offset == plog.high_watermark == 3
        assert plog.aborted_transactions(0, 3) == [(42, 2)], "it hides nothing but itself"
        plog.close()

    trio.run(main)


def test_plain_batch_inside_a_transaction_is_refused(tmp_path: Path) -> None:
    async def main() -> None:
        plog = open_log(tmp_path / "t-0")
        await plog.append(txn_batch(5, 0, 0, 2))
        with pytest.raises(TransactionalBatchError):
            await plog.append(txn_batch(5, 0, 2, 1, transactional=False))
        assert plog.high_watermark == 2
        await plog.append(plain())  # another producer is not concerned
        await plog.append_marker(5, 0, commit=True, coordinator_epoch=0)
        await plog.append(txn_batch(5, 0, 2, 1, transactional=False))  # after the commit it may
        assert plog.high_watermark == 5
        plog.close()

    trio.run(main)


def test_a_marker_wakes_waiting_readers(tmp_path: Path) -> None:
    async def main() -> None:
        plog = open_log(tmp_path / "t-0")
        await plog.append(txn_batch(1, 0, 0, 1))
        event = trio.Event()
        plog.wake_on_append(event)
        await plog.append_marker(1, 0, commit=True, coordinator_epoch=0)
        assert event.is_set(), "a read_committed fetch waiting for the LSO must wake"
        plog.close()

    trio.run(main)


def test_lso_never_below_the_log_start(tmp_path: Path) -> None:
    async def main() -> None:
        plog = open_log(tmp_path / "t-0")
        await plog.append(txn_batch(1, 0, 0, 2))
        await plog.append(plain(3))
        await plog.delete_records(3)
        assert plog.last_stable_offset == 3
        plog.close()

    trio.run(main)


@pytest.mark.parametrize("clean", [True, False], ids=["snapshot", "rebuilt-from-log"])
def test_open_transactions_survive_a_restart(tmp_path: Path, clean: bool) -> None:
    async def main() -> None:
        path = tmp_path / "t-0"
        plog = open_log(path)
        await plog.append(txn_batch(1, 0, 0, 2))  # 0-1 aborted below
        await plog.append(txn_batch(2, 0, 0, 1))  # 2 stays open
        await plog.append_marker(1, 0, commit=False, coordinator_epoch=0)  # 3
        await plog.append(txn_batch(1, 0, 2, 1))  # 4: 1's next transaction, open
        plog.close()
        if not clean:
            (path / "producer-state.json").unlink()  # as after a crash: nothing but the log

        again = open_log(path, clean=clean)
        assert again.ongoing_transactions() == {2: 2, 1: 4}
        assert again.last_stable_offset == 2
        if not clean:  # the snapshot does not hold aborts: the rebuild found the marker
            assert again.aborted_transactions(0, 5) == [(1, 0)]
        with pytest.raises(InvalidProducerEpochError):
            await again.append_marker(1, -1, commit=True, coordinator_epoch=0)
        await again.append_marker(2, 0, commit=True, coordinator_epoch=0)
        await again.append_marker(1, 0, commit=True, coordinator_epoch=0)
        assert again.last_stable_offset == again.high_watermark == 7
        again.close()

    trio.run(main)


def test_aborted_search_stops_as_kafkas_does() -> None:
    txns = PartitionTransactions()
    txns.begin(1, 0)
    txns.begin(2, 5)
    assert txns.complete(1, 10, commit=False) == AbortedTxn(1, 0, 10, 5)
    assert txns.complete(2, 11, commit=False) == AbortedTxn(2, 5, 11, 12)
    txns.begin(3, 20)
    txns.complete(3, 30, commit=False)
    assert txns.aborted_in(0, 12) == [(1, 0), (2, 5)]
    assert txns.aborted_in(11, 40) == [(2, 5), (3, 20)]
    assert txns.aborted_in(12, 20) == [], "3 began at the range's end"
    txns.forget_before(11)
    assert [a.producer_id for a in txns.aborted] == [2, 3]


def test_a_crash_in_the_middle_of_a_transaction_leaves_it_open(tmp_path: Path) -> None:
    async def main() -> None:
        path = tmp_path / "t-0"
        plog = open_log(path)
        await plog.append(plain())  # 0
        await plog.append(txn_batch(4, 0, 0, 2))  # 1-2
        await plog.append(plain())  # 3
        # kill -9: no close, no snapshot; the files are as the appends left them
        again = open_log(path, clean=False)
        assert again.ongoing_transactions() == {4: 1}
        assert (again.last_stable_offset, again.high_watermark) == (1, 4)
        with pytest.raises(OutOfOrderSequenceError):  # the sequences came back too
            await again.append(txn_batch(4, 0, 5, 1))
        await again.append(txn_batch(4, 0, 2, 1))
        await again.append_marker(4, 0, commit=False, coordinator_epoch=0)
        assert again.aborted_transactions(0, again.high_watermark) == [(4, 1)]
        assert again.last_stable_offset == again.high_watermark == 6
        again.close()
        plog.close()

    trio.run(main)


def test_markers_follow_the_topics_timestamp_type(tmp_path: Path) -> None:
    async def main() -> None:
        config = LogConfig(message_timestamp_type="LogAppendTime")
        plog = open_log(tmp_path / "t-0", config=config)
        plog.wall = lambda: 1_234_567.0
        await plog.append(txn_batch(1, 0, 0, 1))
        await plog.append_marker(1, 0, commit=True, coordinator_epoch=0)
        with plog.read(1, 1 << 20) as region:
            assert region is not None
            (batch,) = list(RecordBatchReader(region.read()))
        assert batch.header.is_control and batch.header.timestamp_type == 1
        assert batch.header.max_timestamp == 1_234_567_000
        plog.close()

    trio.run(main)


@given(
    st.lists(st.tuples(st.integers(0, 4), st.booleans()), max_size=60),
    st.integers(0, 130),
    st.integers(0, 130),
)
def test_the_early_stop_never_misses_an_overlapping_abort(
    ops: list[tuple[int, bool]], fetch: int, upper: int
) -> None:
    """Against a plain filter over every abort: Kafka's stop at an LSO past the range is exact."""
    txns = PartitionTransactions()
    offset = 0
    for pid, is_marker in ops:
        if is_marker:
            txns.complete(pid, offset, commit=pid % 2 == 0)
        else:
            txns.begin(pid, offset)
        offset += 2
    overlapping = [a for a in txns.aborted if a.last_offset >= fetch and a.first_offset < upper]
    naive = [(a.producer_id, a.first_offset) for a in overlapping]
    assert txns.aborted_in(fetch, upper) == naive
