"""The log cleaner's semantics, in process over a real log directory: the latest record per
key survives with its offset, tombstones live delete.retention.ms then go, the active
segment and young records stay, the dirty ratio decides, and the key map is bounded."""

from __future__ import annotations

import logging
import os
import random
import time
from pathlib import Path

import pytest
from cleaner_support import COMPACT, append_updates, batch, latest, manager, message_set, read_all, run

from hmb.log.cleaner import rewrite, swap
from hmb.log.cleaner.cleaner import CHECKPOINT_FILE
from hmb.log.errors import KeylessRecordError
from kproto.records.compact import entry_info

KEYS = 20


def _updates(rounds: int, keys: int = KEYS, tag: bytes = b"v") -> list[tuple[bytes, bytes | None]]:
    return [(b"k%03d" % k, b"%s%d-%d" % (tag, r, k) + b"." * 40) for r in range(rounds) for k in range(keys)]


def test_the_latest_record_per_key_survives_at_its_offset(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="hmb.log.cleaner.cleaner")

    async def main() -> None:
        logs, cleaner, _clock = manager(tmp_path)
        (plog,) = logs.create_topic("changelog", 1, COMPACT)
        await append_updates(plog, _updates(10))
        before = read_all(plog)
        segments_before, size_before = len(plog.segments), plog.size_bytes
        assert await cleaner.clean_all() == 1
        after = read_all(plog)
        want = latest(before)
        active_base = plog.active.base_offset
        # below the active segment exactly one record per key, each at its original offset
        cleaned = [r for r in after if r[0] < active_base]
        assert len({k for _o, k, _v in cleaned}) == len(cleaned)
        assert set(after) <= set(before)  # same offsets, same contents: nothing rewritten wrongly
        assert latest(after) == want
        assert plog.size_bytes < size_before / 3
        assert plog.high_watermark == before[-1][0] + 1
        # the next cleaning merges the small cleaned segments (groups up to segment.bytes)
        first_pass = [seg.base_offset for seg in plog.segments.values()]
        assert len(first_pass) == segments_before  # groups follow the sizes before cleaning
        await append_updates(plog, _updates(10, tag=b"w"))
        assert await cleaner.clean_all() == 1
        assert sum(1 for seg in plog.segments.values() if seg.base_offset < first_pass[-3]) == 1
        assert latest(read_all(plog)) == dict(_updates(10, tag=b"w"))
        [state] = cleaner.state()
        assert state["cleanings"] == 2 and state["bytes_cleaned"] > state["bytes_removed"] > 0
        assert state["last_clean_time_ms"] > 0 and state["dirty_ratio"] < 0.5
        assert (tmp_path / CHECKPOINT_FILE).read_text().startswith("0\n1\nchangelog 0 ")
        logs.close()

    run(main)
    assert any("cleaned log changelog-0 (dirty section = [0, " in r.getMessage() for r in caplog.records)


def test_the_active_segment_is_never_cleaned(tmp_path: Path) -> None:
    async def main() -> None:
        logs, cleaner, _clock = manager(tmp_path)
        (plog,) = logs.create_topic("t", 1, {"cleanup.policy": "compact"})  # 1 GiB segments: one
        await append_updates(plog, _updates(5))
        assert await cleaner.clean_all() == 0
        assert len(read_all(plog)) == 5 * KEYS

    run(main)


def test_a_tombstone_lives_delete_retention_ms_then_goes(tmp_path: Path) -> None:
    async def main() -> None:
        logs, cleaner, clock = manager(tmp_path)
        (plog,) = logs.create_topic("t", 1, {**COMPACT, "delete.retention.ms": "60000"})
        await append_updates(plog, _updates(3))
        await plog.append(batch([(b"k000", None)]))
        await append_updates(plog, [u for u in _updates(3, tag=b"w") if u[0] != b"k000"])
        await cleaner.clean_all()
        assert latest(read_all(plog))[b"k000"] is None  # a reader from the start sees the delete
        assert sum(1 for r in read_all(plog) if r[1] == b"k000") == 1
        clock.now_ms += 59_000
        await cleaner.clean_all()
        assert b"k000" in latest(read_all(plog))
        clock.now_ms += 2_000  # the horizon has passed: the cleaner is due whatever the ratio
        assert await cleaner.clean_all() == 1
        assert b"k000" not in latest(read_all(plog))
        assert len(latest(read_all(plog))) == KEYS - 1

    run(main)


def test_min_compaction_lag_keeps_young_records(tmp_path: Path) -> None:
    async def main() -> None:
        logs, cleaner, clock = manager(tmp_path)
        (plog,) = logs.create_topic("t", 1, {**COMPACT, "min.compaction.lag.ms": "3600000"})
        await append_updates(plog, _updates(5))  # stamped T0
        clock.now_ms += 60_000  # a minute old: too young
        assert await cleaner.clean_all() == 0
        assert len(read_all(plog)) == 5 * KEYS
        clock.now_ms += 3_600_000
        assert await cleaner.clean_all() == 1
        assert len(read_all(plog)) < 5 * KEYS

    run(main)


def test_the_dirty_ratio_and_max_compaction_lag_decide(tmp_path: Path) -> None:
    # an all-dirty log has ratio 1.0: the first cleaning runs even at 0.99
    async def ratio() -> None:
        logs, cleaner, clock = manager(tmp_path)
        (plog,) = logs.create_topic("t", 1, {**COMPACT, "min.cleanable.dirty.ratio": "0.99"})
        await append_updates(plog, _updates(5))
        assert await cleaner.clean_all() == 1
        await append_updates(plog, _updates(1, tag=b"x"))  # a little more dirt: far below 0.99
        assert await cleaner.clean_all() == 0
        lagged = {**COMPACT, "min.cleanable.dirty.ratio": "0.99", "max.compaction.lag.ms": "1000"}
        logs.set_topic_overrides("t", lagged)
        clock.now_ms += 2_000  # the oldest dirty record is older than max.compaction.lag.ms
        assert await cleaner.clean_all() == 1

    run(ratio)


@pytest.mark.parametrize("codec", [0, 1, 3, 4])
def test_compressed_and_idempotent_batches_keep_their_producer_state(tmp_path: Path, codec: int) -> None:
    async def main() -> None:
        logs, cleaner, _clock = manager(tmp_path)
        (plog,) = logs.create_topic("t", 1, COMPACT)
        seq = 0
        for r in range(8):
            pairs = [(b"k%d" % k, b"r%d" % r + b"." * 60) for k in range(4)]
            await plog.append(batch(pairs, codec=codec, producer=(42, 0, seq)))
            seq += 4
        last = plog.producers.producers[42].batches[-1].last_offset
        await cleaner.clean_all()
        assert latest(read_all(plog)) == {b"k%d" % k: b"r7" + b"." * 60 for k in range(4)}
        infos = [
            entry_info(e)
            for seg in plog.segments.values()
            for e in rewrite.read_entries(seg, rewrite.Throttle(1e308))
        ]
        assert all(i.producer_id == 42 for i in infos)
        assert max(i.last_offset for i in infos) == last  # the producer's last batch is still there
        # the producer goes on where it was: its next sequence is accepted, a retry is a duplicate
        info = await plog.append(batch([(b"k0", b"new")], codec=codec, producer=(42, 0, seq)))
        assert not info.duplicate
        retry = await plog.append(batch([(b"k0", b"new")], codec=codec, producer=(42, 0, seq)))
        assert retry.duplicate

    run(main)


@pytest.mark.parametrize(("magic", "codec"), [(0, 0), (1, 0), (0, 1), (1, 2), (1, 3)])
def test_message_sets_are_cleaned_too(tmp_path: Path, magic: int, codec: int) -> None:
    async def main() -> None:
        logs, cleaner, _clock = manager(tmp_path)
        (plog,) = logs.create_topic("t", 1, COMPACT)
        for r in range(10):
            values = [random.Random(r * 3 + k).randbytes(200) for k in range(3)]  # incompressible
            await plog.append(message_set([(b"k%d" % k, values[k]) for k in range(3)], magic, codec))
        await cleaner.clean_all()
        records = read_all(plog)
        assert latest(records) == {b"k%d" % k: random.Random(27 + k).randbytes(200) for k in range(3)}
        assert len(records) < 30

    run(main)


def test_a_full_key_map_cleans_in_several_passes(tmp_path: Path) -> None:
    async def main() -> None:
        # 1,024 bytes of map: 37 keys per pass (24 bytes each, 90% full), 100 keys in the log
        logs, cleaner, _clock = manager(tmp_path, buffer=1024)
        assert cleaner.map_slots == 37
        (plog,) = logs.create_topic("t", 1, COMPACT)
        updates = _updates(3, keys=100)
        await append_updates(plog, updates)
        want = latest(read_all(plog))
        first = await cleaner.clean_one()
        assert first and cleaner.state()[0]["first_dirty_offset"] < plog.active.base_offset
        await cleaner.clean_all()
        assert latest(read_all(plog)) == want

    run(main)


def test_a_compacted_topic_refuses_keyless_records_whole(tmp_path: Path) -> None:
    async def main() -> None:
        logs, _cleaner, _clock = manager(tmp_path)
        (plog,) = logs.create_topic("t", 1, COMPACT)
        with pytest.raises(KeylessRecordError, match="record 1 has no key"):
            await plog.append(batch([(b"k", b"v"), (None, b"v")]))
        assert plog.high_watermark == 0 and plog.active.size == 0
        (other,) = logs.create_topic("plain", 1)
        await other.append(batch([(None, b"v")]))  # a deleting topic takes them

    run(main)


def test_compact_alone_is_never_deleted_by_retention(tmp_path: Path) -> None:
    async def main() -> None:
        logs, _cleaner, clock = manager(tmp_path)
        (compacted,) = logs.create_topic("c", 1, {**COMPACT, "retention.ms": "1000", "retention.bytes": "1"})
        (both,) = logs.create_topic(
            "b", 1, {**COMPACT, "cleanup.policy": "compact,delete", "retention.bytes": "1"}
        )
        for plog in (compacted, both):
            await append_updates(plog, _updates(5))
        clock.now_ms += 10_000_000
        await logs.apply_retention(clock())
        assert compacted.log_start_offset == 0 and len(read_all(compacted)) == 5 * KEYS
        assert both.log_start_offset > 0

    run(main)


def test_a_swap_that_lost_the_race_to_retention_is_abandoned(tmp_path: Path) -> None:
    async def main() -> None:
        logs, cleaner, _clock = manager(tmp_path)
        (plog,) = logs.create_topic("t", 1, {**COMPACT, "cleanup.policy": "compact,delete"})
        await append_updates(plog, _updates(5))
        group = plog.segments.values()[:2]
        await plog.delete_records(group[1].base_offset + 1)  # takes the first segment away
        await cleaner._install(plog, group)
        assert not [p for p in plog.directory.iterdir() if p.name.endswith((swap.SWAP, swap.PLAN))]
        assert plog.log_start_offset == group[1].base_offset + 1

    run(main)


def test_message_set_tombstones_go_once_their_segment_is_older_than_the_horizon(tmp_path: Path) -> None:
    async def main() -> None:
        logs, cleaner, _clock = manager(tmp_path)
        (plog,) = logs.create_topic("t", 1, {**COMPACT, "delete.retention.ms": "3600000"})
        await plog.append(message_set([(b"gone", b"x" * 100), (b"k0", b"y" * 100)]))
        await plog.append(message_set([(b"gone", None)]))
        for r in range(30):
            await plog.append(message_set([(b"k%d" % (r % 5), b"z%d" % r + b"." * 100)]))
        await cleaner.clean_all()
        assert latest(read_all(plog))[b"gone"] is None  # kept: nothing clean is old enough yet
        # the tombstone's segment is two hours old, the clean part's last one new: the legacy
        # horizon (that one's time less delete.retention.ms) has passed the tombstone
        now = time.time()
        closed = plog.segments.values()[:-1]
        for seg in closed:
            old = now - 7200 if seg is not closed[-1] else now
            os.utime(seg.log_path, (old, old))
        for r in range(30):
            await plog.append(message_set([(b"k%d" % (r % 5), b"w%d" % r + b"." * 100)]))
        assert await cleaner.clean_all() == 1
        assert b"gone" not in latest(read_all(plog))

    run(main)


def test_a_cleaning_stops_before_an_open_transaction(tmp_path: Path) -> None:
    async def main() -> None:
        logs, cleaner, _clock = manager(tmp_path)
        (plog,) = logs.create_topic("t", 1, COMPACT)
        await append_updates(plog, _updates(10))
        before = read_all(plog)
        segment_base = plog.segments.values()[3].base_offset
        cleaner.first_unstable_offset = lambda p: segment_base + 1  # a transaction open there
        assert await cleaner.clean_all() == 1
        assert cleaner.state()[0]["first_dirty_offset"] == segment_base
        after = read_all(plog)
        assert [r for r in after if r[0] >= segment_base] == [r for r in before if r[0] >= segment_base]
        assert len(after) < len(before)  # what lies before it was cleaned

    run(main)


def test_a_topic_made_again_starts_its_cleaner_state_afresh(tmp_path: Path) -> None:
    async def main() -> None:
        logs, cleaner, _clock = manager(tmp_path)
        (plog,) = logs.create_topic("t", 1, COMPACT)
        await append_updates(plog, _updates(10))
        await cleaner.clean_all()
        assert cleaner.state()[0]["first_dirty_offset"] > 0
        await logs.delete_topic("t")
        (again,) = logs.create_topic("t", 1, COMPACT)
        await append_updates(again, _updates(2))
        [state] = cleaner.state()
        assert state["first_dirty_offset"] == 0 and state["cleanings"] == 0

    run(main)


def test_the_throttle_paces_bytes_per_second(monkeypatch: pytest.MonkeyPatch) -> None:
    throttle = rewrite.Throttle(1000.0)
    waits: list[float] = []
    monkeypatch.setattr(throttle.stop, "wait", lambda s: waits.append(s))
    throttle(500)
    throttle(1500)  # 2,000 bytes at 1,000 bytes/s: the caller waits about two seconds
    assert waits and 1.5 < waits[-1] <= 2.0
    throttle.stop.set()
    with pytest.raises(rewrite.CleanerStoppedError):
        throttle(1)
