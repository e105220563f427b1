"""DescribeLogDirs v1-v5 in process: every log dir, with each partition's size.

v3 adds the top-level error code, v4 the file system's total and usable
bytes, v5 the cordoned flag.  What can fail: a size that is not the bytes
on disk, a null topic list not meaning "all", a partition in the wrong dir,
unknown partitions listed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from kproto import ApiKey, ErrorCode

from .bodies import batch, create, produce_one, spec
from .harness import InProcessBroker

DESCRIBE_LOG_DIRS = ApiKey.DESCRIBE_LOG_DIRS


def on_disk(directory: Path) -> int:
    return sum(f.stat().st_size for f in directory.glob("*.log"))


async def describe(b: InProcessBroker, version: int, topics: dict[str, list[int]] | None) -> Any:
    req = {"topics": None if topics is None else [{"topic": t, "partitions": ps} for t, ps in topics.items()]}
    resp = await b.request(DESCRIBE_LOG_DIRS, version, req)
    assert resp.throttle_time_ms == 0
    if version >= 3:
        assert resp.error_code == ErrorCode.NONE
    return resp


def sizes(resp: Any) -> dict[tuple[str, str, int], int]:
    """(log dir, topic, partition) -> size, checking the single-broker constants on the way."""
    out = {}
    for d in resp.results:
        assert d.error_code == ErrorCode.NONE
        for t in d.topics:
            for p in t.partitions:
                assert (p.offset_lag, p.is_future_key) == (0, False)
                out[(d.log_dir, t.name, p.partition_index)] = p.partition_size
    return out


@pytest.mark.parametrize("version", range(1, 6))
async def test_sizes_per_partition(make_broker: Any, tmp_path: Path, version: int) -> None:
    dirs = [tmp_path / "a", tmp_path / "b"]
    b = make_broker(f"log.dirs={dirs[0]},{dirs[1]}")
    await create(b, 0, spec("sized", 2))
    assert (await produce_one(b, "sized", batch([b"x" * 1000]))).error_code == 0
    resp = await describe(b, version, None)
    assert [d.log_dir for d in resp.results] == [str(d.absolute()) for d in dirs]
    found = sizes(resp)
    for (log_dir, topic, partition), size in found.items():
        assert size == on_disk(Path(log_dir) / f"{topic}-{partition}")
    assert {(t, p) for _, t, p in found} >= {("sized", 0), ("sized", 1)}
    assert sum(s for (_, t, _), s in found.items() if t == "sized") > 1000
    for d in resp.results:
        if version >= 4:
            fs = os.statvfs(d.log_dir)
            assert d.total_bytes == fs.f_blocks * fs.f_frsize
            assert 0 < d.usable_bytes <= d.total_bytes
        if version >= 5:
            assert d.is_cordoned is False


async def test_only_the_partitions_asked_for(broker: InProcessBroker) -> None:
    await create(broker, 0, spec("one", 3))
    resp = await describe(broker, 4, {"one": [2, 0, 9], "ghost": [0]})
    assert len(resp.results) == 1  # every log dir is listed
    assert sorted((t, p) for _, t, p in sizes(resp)) == [("one", 0), ("one", 2)]
    resp = await describe(broker, 2, {})
    assert [list(d.topics) for d in resp.results] == [[]]
