"""The cleaner meets transactions: aborted records go, committed ones and markers stay, and an
open transaction stops the cleaning before its first offset (the partition's own LSO rule)."""

from __future__ import annotations

from pathlib import Path

from cleaner_support import COMPACT, append_updates, manager, read_all, run

from hmb.log.cleaner.cleaner import aborted_records
from hmb.log.transactions import AbortedTxn
from kproto.records import RecordBatchBuilder
from kproto.records.entry import ENTRY_HEAD

T0 = 1_700_000_000_000


def txn_batch(pid: int, seq: int, pairs: list[tuple[bytes, bytes]]) -> bytes:
    b = RecordBatchBuilder(producer_id=pid, producer_epoch=0, base_sequence=seq, is_transactional=True)
    for key, value in pairs:
        b.append(key, value, T0)
    return b.build()


def control_batches(plog) -> int:  # type: ignore[no-untyped-def]
    """How many control batches the log holds (attributes bit 5)."""
    with plog.read(plog.log_start_offset, 1 << 24) as region:
        data = region.read() if region is not None else b""
    pos = count = 0
    while len(data) - pos >= 12:
        size = 12 + ENTRY_HEAD.unpack_from(data, pos)[1]
        attributes = int.from_bytes(data[pos + 21 : pos + 23], "big")
        count += bool(attributes & 0x20)
        pos += size
    return count


def test_aborted_records_are_dropped_and_committed_ones_and_markers_kept(tmp_path: Path) -> None:
    async def main() -> None:
        logs, cleaner, _clock = manager(tmp_path)
        (plog,) = logs.create_topic("changelog", 1, COMPACT)
        await plog.append(txn_batch(7, 0, [(b"kept", b"committed")]))
        await plog.append_marker(7, 0, commit=True, coordinator_epoch=0)
        await plog.append(txn_batch(7, 1, [(b"gone", b"aborted"), (b"kept2", b"aborted too")]))
        await plog.append_marker(7, 0, commit=False, coordinator_epoch=0)
        await append_updates(plog, [(b"k%02d" % i, b"x" * 60) for i in range(80)])  # roll past them
        before = read_all(plog)
        assert (2, b"gone", b"aborted") in before
        assert await cleaner.clean_all() == 1
        after = read_all(plog)
        keys = {k for _o, k, _v in after}
        assert b"kept" in keys and b"gone" not in keys and b"kept2" not in keys
        assert control_batches(plog) == 2  # both markers stay

    run(main)


def test_an_open_transaction_stops_the_cleaning_before_it(tmp_path: Path) -> None:
    async def main() -> None:
        logs, cleaner, _clock = manager(tmp_path)
        (plog,) = logs.create_topic("changelog", 1, COMPACT)
        await append_updates(plog, [(b"k%02d" % (i % 5), b"y" * 60) for i in range(40)])
        open_at = plog.high_watermark
        await plog.append(txn_batch(9, 0, [(b"k00", b"undecided")]))
        await append_updates(plog, [(b"k%02d" % (i % 5), b"z" * 60) for i in range(40)])
        before = read_all(plog)
        assert await cleaner.clean_all() == 1
        after = read_all(plog)
        assert [r for r in after if r[0] >= open_at] == [r for r in before if r[0] >= open_at]
        assert len([r for r in after if r[0] < open_at]) < len([r for r in before if r[0] < open_at])
        assert cleaner.state()[0]["first_dirty_offset"] <= open_at

    run(main)


def test_aborted_records_predicate_follows_each_producers_spans() -> None:
    aborted = [AbortedTxn(1, 10, 20, 21), AbortedTxn(2, 15, 30, 31), AbortedTxn(1, 40, 45, 46)]
    is_aborted = aborted_records(aborted)
    assert [is_aborted(1, o) for o in (9, 10, 20, 21, 39, 40, 45, 46)] == [
        False, True, True, False, False, True, True, False,
    ]  # fmt: skip
    assert is_aborted(2, 15) and not is_aborted(2, 31) and not is_aborted(3, 15)
