"""A cleaning interrupted at every step of its file work, as a crash would interrupt it: the
partition read again afterwards holds the latest record of every key, offsets that only
increase, segments that do not overlap, and no leftover cleaning file.

The crash is simulated in process: from the k-th rename or unlink on, every one raises
(nothing after the crash point touches the files, as after a kill), and the directory is
then opened by a fresh log manager, whose load finishes or rolls back the swap.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path
from typing import Any

import pytest
from cleaner_support import COMPACT, append_updates, latest, manager, read_all, run

from hmb.log.cleaner import swap
from hmb.log.scan import iter_entries

UPDATES = [(b"k%02d" % k, b"r%d-%d" % (r, k) + b"." * 40) for r in range(6) for k in range(12)]
WANT = latest([(0, k, v) for k, v in UPDATES])


class Crash(BaseException):
    """The process died here (BaseException: no ``except OSError`` of the cleaner catches it)."""


class CrashPoint:
    """Counts the renames and unlinks; from the ``at``-th on each one raises :class:`Crash`."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, at: int | None) -> None:
        self.at = at
        self.calls = 0
        for name in ("rename", "unlink"):
            real = getattr(os, name)
            monkeypatch.setattr(os, name, self._wrap(real))

    def _wrap(self, real: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            if self.at is not None and self.calls >= self.at:
                raise Crash
            return real(*args, **kwargs)

        return call


def _prepare(tmp_path: Path) -> None:
    async def main() -> None:
        logs, _cleaner, _clock = manager(tmp_path)
        (plog,) = logs.create_topic("t", 1, COMPACT)
        await append_updates(plog, UPDATES)
        logs.close()

    run(main)


def _clean(tmp_path: Path) -> None:
    async def main() -> None:
        logs, cleaner, _clock = manager(tmp_path)
        read_all(logs.topics["t"][0])  # load it
        await cleaner.clean_all()

    run(main)


def _check(tmp_path: Path) -> None:
    async def main() -> None:
        logs, cleaner, _clock = manager(tmp_path)
        plog = logs.topics["t"][0]
        records = read_all(plog)
        offsets = [r[0] for r in records]
        assert offsets == sorted(set(offsets)), "an offset twice or out of order"
        assert latest(records) == WANT
        ranges = []
        for seg in plog.segments.values():
            lasts = [e.last_offset for e in iter_entries(seg.fd, 0, seg.size, validate=True)]
            if lasts:
                ranges.append((seg.base_offset, lasts[-1]))
        assert all(a[1] < b[0] for a, b in itertools.pairwise(ranges)), ranges
        leftovers = [
            n for n in os.listdir(plog.directory) if n.endswith((swap.CLEANED, swap.SWAP, swap.PLAN))
        ]
        assert not leftovers
        await cleaner.clean_all()  # and the log still cleans
        assert latest(read_all(plog)) == WANT
        logs.close()

    run(main)


def _mutations(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    _prepare(tmp_path)
    with monkeypatch.context() as m:
        counter = CrashPoint(m, None)
        _clean(tmp_path)
    return counter.calls


def test_a_crash_at_any_step_of_a_cleaning_loses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    steps = _mutations(tmp_path / "count", monkeypatch)
    assert steps >= 6  # plan, two renames to .swap, the old segment unlinked, two renames in
    for at in range(1, steps + 1):
        directory = tmp_path / f"crash{at}"
        _prepare(directory)
        with monkeypatch.context() as m:
            CrashPoint(m, at)
            with pytest.raises(Crash):
                _clean(directory)
        _check(directory)
