"""The leader-epoch cache and its checkpoint (hmb.log.leader_epochs), Kafka's answers.

Where each epoch ends, for the current, older, unknown newer and undefined
epochs (several epochs, as replication will bring); epochs only grow; the
file is Kafka's text layout; a bad file is ignored with a warning.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hmb.log.leader_epochs import CHECKPOINT, LeaderEpochCache


def test_end_offsets_follow_kafkas_rules(tmp_path: Path) -> None:
    cache = LeaderEpochCache(tmp_path)
    assert cache.end_offset_for(0, 10) == (-1, -1)  # nothing known yet
    cache.assign(1, 5)
    cache.assign(3, 20)
    cache.assign(2, 30)  # an older epoch than the latest is no news
    assert cache.entries == [(1, 5), (3, 20)]
    assert cache.end_offset_for(3, 42) == (3, 42)  # the latest: the log end
    assert cache.end_offset_for(1, 42) == (1, 20)  # ends where the next begins
    assert cache.end_offset_for(2, 42) == (1, 20)  # unknown in between: the floor epoch
    assert cache.end_offset_for(0, 42) == (0, 5)  # before the first: where the first begins
    assert cache.end_offset_for(4, 42) == (-1, -1)  # newer than any
    assert cache.end_offset_for(-1, 42) == (-1, -1)
    assert (tmp_path / CHECKPOINT).read_text() == "0\n2\n1 5\n3 20\n"
    assert LeaderEpochCache.load(tmp_path).entries == [(1, 5), (3, 20)]


@pytest.mark.parametrize("text", ["1\n1\n0 0\n", "0\n2\n0 0\n", "0\n2\n3 0\n1 5\n", "zero\n"])
def test_a_bad_checkpoint_is_ignored_with_a_warning(
    tmp_path: Path, text: str, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / CHECKPOINT).write_text(text)
    assert LeaderEpochCache.load(tmp_path).entries == []
    assert "leader epochs start afresh" in caplog.text


def test_a_moved_log_start_moves_the_epochs_start(tmp_path: Path) -> None:
    cache = LeaderEpochCache(tmp_path)
    cache.assign(0, 0)
    cache.assign(2, 50)
    cache.truncate_from_start(30)
    assert cache.entries == [(0, 30), (2, 50)]
    cache.truncate_from_start(50)
    assert cache.entries == [(2, 50)]
    cache.truncate_from_start(70)
    assert (tmp_path / CHECKPOINT).read_text() == "0\n1\n2 70\n"
