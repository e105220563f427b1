"""A full disk under the running broker: produce fails with an error code,
nothing acknowledged is lost, other partitions and connections are served,
and producing resumes once space returns.

Needs root to mount a small tmpfs as the data directory; skipped otherwise.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from broker_process import BrokerProcess
from wire import WireClient, fetch_body, metadata_body, produce_body

from kproto import ErrorCode
from kproto.records import build_message_set, read_message_set


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("needs root and mount(8) to create a small tmpfs for the data directory")
    mnt = tmp_path / "disk"
    mnt.mkdir()
    out = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mnt)], capture_output=True, text=True
    )
    if out.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {out.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def test_disk_full_fails_cleanly_and_recovers(small_disk: Path) -> None:
    ballast = small_disk / "ballast"
    with (
        BrokerProcess(small_disk / "data", "log.segment.bytes=1048576") as broker,
        WireClient(broker.bootstrap) as c,
    ):
        c.request(3, 0, metadata_body("full"))
        batch = build_message_set([(None, b"x" * 1000)] * 50)  # ~52 KiB per request
        acked = 0
        # fill the disk with ballast up to ~200 KiB free, then produce into the rest
        free = shutil.disk_usage(small_disk).free
        with open(ballast, "wb") as f:
            f.write(b"\0" * max(0, free - 200 * 1024))
        codes = []
        for _ in range(20):
            part = c.request(0, 0, produce_body("full", 0, batch)).responses[0].partition_responses[0]
            codes.append(part.error_code)
            if part.error_code:
                break
            acked += 50
        assert codes[-1] == ErrorCode.NOT_LEADER_OR_FOLLOWER, f"expected a storage error, got {codes}"
        assert acked > 0
        broker.wait_for_log(r"append to full-0 failed")

        # the log is consistent: everything acknowledged reads back, nothing more
        got = []
        offset = 0
        while offset < acked:
            fetched = c.request(1, 0, fetch_body("full", 0, offset)).responses[0].partitions[0]
            assert fetched.error_code == 0
            recs = read_message_set(fetched.records)
            got += recs
            offset = recs[-1].offset + 1
        assert [r.offset for r in got] == list(range(acked))
        assert fetched.high_watermark == acked

        # space returns: producing resumes at the next offset
        ballast.unlink()
        part = c.request(0, 0, produce_body("full", 0, batch)).responses[0].partition_responses[0]
        assert (part.error_code, part.base_offset) == (0, acked)
        assert broker.alive()
