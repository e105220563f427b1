"""What the log cleaner's tests share: a log manager with a movable clock, a compacted
topic, appends by key and the log read back record by record."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any

import trio

from hmb.log.cleaner.cleaner import LogCleaner
from hmb.log.config import LogConfig
from hmb.log.manager import LogManager
from hmb.log.partition import PartitionLog
from kproto.records import RecordBatchBuilder, build_message_set, read_records

T0_MS = 1_700_000_000_000


def run(fn: Callable[[], Awaitable[Any]]) -> Any:
    async def bounded() -> Any:
        with trio.fail_after(60):
            return await fn()

    return trio.run(bounded)


class Clock:
    """The broker's wall clock, in seconds, moved by hand."""

    def __init__(self, now_ms: int = T0_MS) -> None:
        self.now_ms = now_ms

    def __call__(self) -> float:
        return self.now_ms / 1000


COMPACT = {"cleanup.policy": "compact", "segment.bytes": "1024"}


def manager(
    tmp_path: Path, clock: Clock | None = None, *, buffer: int = 1 << 20, **kwargs: Any
) -> tuple[LogManager, LogCleaner, Clock]:
    clock = clock or Clock()
    logs = LogManager([tmp_path], LogConfig())
    logs.wall = clock
    logs.load()
    cleaner = LogCleaner(logs, dedupe_buffer_size=buffer, now_ms=lambda: clock.now_ms, **kwargs)
    return logs, cleaner, clock


def batch(
    pairs: Iterable[tuple[bytes | None, bytes | None]],
    *,
    codec: int = 0,
    ts: int = T0_MS,
    producer: tuple[int, int, int] = (-1, -1, -1),
) -> bytes:
    b = RecordBatchBuilder(
        codec, producer_id=producer[0], producer_epoch=producer[1], base_sequence=producer[2]
    )
    for key, value in pairs:
        b.append(key, value, ts)
    return b.build()


def message_set(pairs: Iterable[tuple[bytes | None, bytes | None]], magic: int = 1, codec: int = 0) -> bytes:
    return build_message_set([(k, v, T0_MS) for k, v in pairs], magic, codec)


async def append_updates(
    plog: PartitionLog, updates: Iterable[tuple[bytes, bytes | None]], per_batch: int = 4
) -> None:
    """Append ``updates`` a few records per batch (segments of 1 KiB roll often)."""
    items = list(updates)
    for i in range(0, len(items), per_batch):
        await plog.append(batch(items[i : i + per_batch]))


def read_all(plog: PartitionLog) -> list[tuple[int, bytes | None, bytes | None]]:
    """Every record from the log start, as a consumer reading from offset 0 gets them."""
    out: list[tuple[int, bytes | None, bytes | None]] = []
    offset = plog.log_start_offset
    while offset < plog.high_watermark:
        with plog.read(offset, 1 << 20, min_one=True) as region:
            if region is None:
                break
            data = region.read()
        records = [r for r in read_records(data) if r.offset >= offset]
        from kproto.records.entry import ENTRY_HEAD, last_offset

        # empty batches (a producer's last, emptied by cleaning) move the position on too
        pos, last = 0, offset - 1
        while len(data) - pos >= 12:
            size = 12 + ENTRY_HEAD.unpack_from(data, pos)[1]
            if pos + size > len(data):
                break
            last = max(last, last_offset(data, pos))
            pos += size
        out.extend((r.offset, r.key, r.value) for r in records)
        offset = last + 1
    return out


def latest(records: list[tuple[int, bytes | None, bytes | None]]) -> dict[bytes | None, bytes | None]:
    state: dict[bytes | None, bytes | None] = {}
    for _offset, key, value in records:
        state[key] = value
    return state
