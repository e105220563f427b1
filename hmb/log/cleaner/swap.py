"""Putting a cleaned segment in place of the segments it replaces, so that a crash at any
moment leaves either the old segments or the new one, never both and never neither.

The files, as Kafka names them, for a cleaned segment of base offset B::

    B.log.cleaned, B.index.cleaned   being written; a crash now: they are deleted
    B.clean-plan                     the base offsets of the segments B replaces
                                     (written and fsynced before the swap files exist)
    B.log.swap, B.index.swap         complete and fsynced: the cleaning is decided.
                                     A crash from here on: recovery finishes the swap
    B.log, B.index                   the swap is done (the old segments are unlinked
                                     first, then the index, then the log, renamed in)

Recovery (:func:`finish_interrupted_swaps`, run when a partition's files are
read) deletes ``.cleaned`` files and plans without a swap (rolling the
cleaning back), and for each ``B.log.swap`` deletes the segments its plan
names, renames the swap files to their final names and deletes the plan
(rolling it forward).  An index renamed in before the crash, whose log was
not, is deleted: the load rebuilds it from the log.  Kafka's ``.deleted``
files, left by a Kafka broker, are deleted too.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from hmb.log.segment import segment_name

log = logging.getLogger(__name__)

CLEANED = ".cleaned"
SWAP = ".swap"
PLAN = ".clean-plan"
DELETED = ".deleted"
_SUFFIXES = (CLEANED, SWAP, PLAN, DELETED)


def cleaned_path(directory: Path, base: int, kind: str) -> Path:
    """``B.log.cleaned`` / ``B.index.cleaned``: where a cleaned segment is written."""
    return directory / f"{segment_name(base)}.{kind}{CLEANED}"


def swap_path(directory: Path, base: int, kind: str) -> Path:
    return directory / f"{segment_name(base)}.{kind}{SWAP}"


def plan_path(directory: Path, base: int) -> Path:
    return directory / f"{segment_name(base)}{PLAN}"


def fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _unlink(path: Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def commit_cleaned(directory: Path, base: int, replaces: list[int]) -> None:
    """Decide the cleaning: the plan, then the ``.cleaned`` files renamed to ``.swap``.

    The cleaned files must be complete and fsynced.  After this returns, a
    crash finishes the swap at the next start.
    """
    plan = plan_path(directory, base)
    fd = os.open(plan, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, json.dumps({"replaces": replaces}).encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    fsync_dir(directory)
    os.rename(cleaned_path(directory, base, "index"), swap_path(directory, base, "index"))
    os.rename(cleaned_path(directory, base, "log"), swap_path(directory, base, "log"))
    fsync_dir(directory)


def rename_in(directory: Path, base: int) -> None:
    """The swap files take their final names (the replaced segments' files are gone)."""
    os.rename(swap_path(directory, base, "index"), directory / f"{segment_name(base)}.index")
    os.rename(swap_path(directory, base, "log"), directory / f"{segment_name(base)}.log")
    fsync_dir(directory)
    _unlink(plan_path(directory, base))


def abandon(directory: Path, base: int) -> None:
    """Remove every file of a cleaning that will not be swapped in."""
    for kind in ("log", "index"):
        _unlink(cleaned_path(directory, base, kind))
        _unlink(swap_path(directory, base, kind))
    _unlink(plan_path(directory, base))


def _replaced(directory: Path, base: int) -> list[int]:
    try:
        return [int(b) for b in json.loads(plan_path(directory, base).read_text())["replaces"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        # A swap exists only after its plan was fsynced: this is a damaged directory.
        # Replacing the segment of the same base is the most that can be done safely.
        log.error("cleaning plan of %s/%s unreadable (%s): replacing that segment only", directory, base, exc)
        return [base]


def finish_interrupted_swaps(directory: Path, names: list[str]) -> list[str]:
    """Roll back or finish what a crash interrupted; the directory's names afterwards.

    Returns ``names`` unchanged (and touches nothing) when no cleaning file is there.
    """
    if not any(name.endswith(_SUFFIXES) for name in names):
        return names
    for name in names:
        if name.endswith((CLEANED, DELETED)):
            _unlink(directory / name)
    for name in names:
        if not name.endswith(".log" + SWAP):
            continue
        base = int(name.split(".", 1)[0])
        replaced = _replaced(directory, base)
        index_swap = swap_path(directory, base, "index")
        for old in replaced:
            _unlink(directory / f"{segment_name(old)}.log")
            if old != base or index_swap.exists():
                _unlink(directory / f"{segment_name(old)}.index")
        if not index_swap.exists():  # renamed before the crash, its log not: rebuilt from the log
            _unlink(directory / f"{segment_name(base)}.index")
        else:
            os.rename(index_swap, directory / f"{segment_name(base)}.index")
        os.rename(directory / name, directory / f"{segment_name(base)}.log")
        log.warning(
            "finished an interrupted cleaning of %s: segment %d replaces %s", directory.name, base, replaced
        )
    for name in os.listdir(directory):
        if name.endswith((PLAN, ".index" + SWAP)):  # plans of finished or abandoned cleanings
            _unlink(directory / name)
    fsync_dir(directory)
    return os.listdir(directory)
