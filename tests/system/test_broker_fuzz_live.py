"""A short run of the live-broker fuzzer (bench/fuzz_live.py) against a fresh broker.

Random and damaged frames of every API kproto declares, from a few
connections at once.  The fuzzer itself checks, frame by frame, that each
one is answered with its correlation id (in order) or the connection is
closed within 10 s, that an answer to a well-formed request decodes as that
API's response, and that a sentinel connection is served every second; any
breach raises :class:`bench.fuzz_live.Finding`.  Here the totals are
checked on top: every frame accounted for, the broker alive, no ERROR in its
log, memory not run away.  The million-frame run is in
bench/results/fuzz-live.md.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import trio
from broker_process import BrokerProcess

from bench.fuzz_live import fuzz
from kproto.registry import REQUESTS

FRAMES = 5000


@pytest.fixture
def fuzzed(tmp_path: Path) -> Iterator[BrokerProcess]:
    with BrokerProcess(tmp_path / "data") as b:
        yield b


@pytest.mark.parametrize("seed", [1, 2])
def test_fuzz_live_broker(fuzzed: BrokerProcess, seed: int) -> None:
    rss_before = fuzzed.rss_bytes()
    stats = trio.run(fuzz, "127.0.0.1", fuzzed.port, FRAMES, 8, seed)

    assert stats.frames == FRAMES
    # each frame is answered or its connection closed (Produce acks=0: a probe behind it is answered)
    assert stats.answered + stats.closed == FRAMES
    assert stats.answered > FRAMES // 4 and stats.closed > FRAMES // 4  # both paths exercised
    assert stats.decoded > FRAMES // 4  # many answers checked as valid responses of their API
    assert set(stats.per_api) == {int(m.api_key or 0) for m in REQUESTS.values()}
    assert stats.sentinel_checks >= 1
    assert fuzzed.alive(), "the broker died:\n" + fuzzed.log_text()[-3000:]
    bad = [line for line in fuzzed.lines if " ERROR " in line or "Traceback" in line]
    assert not bad, "the broker logged errors:\n" + "".join(bad[:20])
    assert fuzzed.rss_bytes() < rss_before + 100 * 2**20
