"""A full disk under the running broker: produce fails with an error code,
nothing acknowledged is lost, other partitions and connections are served,
and producing resumes once space returns (a filler file deleted, or the filesystem
grown by a remount), in Produce v0's and v8's error codes, across a kill -9 while full.

Needs root to mount a small tmpfs as the data directory; skipped otherwise.  A
simulated ENOSPC without root would not be honest here: RLIMIT_FSIZE fails writes with
EFBIG and also refuses the preallocated index files, which a real full disk does not.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from broker_process import BrokerProcess
from durability import fetch_body_v11
from wire import WireClient, fetch_body, metadata_body, produce_body

from kproto import ErrorCode
from kproto.records import RecordBatchBuilder, build_message_set, read_message_set, read_records


def fetch_v11_body(topic: str, offset: int) -> dict[str, Any]:
    return fetch_body_v11(topic, 0, offset)


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


def _produce_v8(c: WireClient, topic: str, records: bytes) -> Any:
    body = {"transactional_id": None, **produce_body(topic, 0, records)}
    return c.request(0, 8, body).responses[0].partition_responses[0]


def _fetch_values(c: WireClient, topic: str, end: int) -> list[bytes | None]:
    values: list[bytes | None] = []
    offset = 0
    while offset < end:
        part = c.request(1, 11, fetch_v11_body(topic, offset)).responses[0].partitions[0]
        assert part.error_code == 0
        recs = [r for r in read_records(part.records or b"") if r.offset >= offset]
        assert recs, offset
        values += [r.value for r in recs]
        offset = recs[-1].offset + 1
    return values


def test_disk_full_v8_storage_error_survives_kill_and_resumes_when_the_disk_grows(small_disk: Path) -> None:
    """Produce v8 gets KAFKA_STORAGE_ERROR (v0 NOT_LEADER_OR_FOLLOWER) on a full disk; a
    broker killed while the disk is full starts again on the still full disk and serves
    everything acknowledged; once the filesystem grows (remount) producing resumes."""
    topic = "full8"
    data = small_disk / "data"
    broker = BrokerProcess(data, "log.segment.bytes=1048576").start()
    try:
        with WireClient(broker.bootstrap) as c:
            c.request(3, 0, metadata_body(topic))
            free = shutil.disk_usage(small_disk).free
            with open(small_disk / "ballast", "wb") as f:
                f.write(b"\0" * max(0, free - 200 * 1024))
            acked: list[bytes] = []
            codes = []
            for i in range(20):
                batch = RecordBatchBuilder()
                values = [b"%03d-%02d|" % (i, k) + b"y" * 1000 for k in range(50)]
                for v in values:
                    batch.append(None, v, 1_700_000_000_000 + i, [])
                part = _produce_v8(c, topic, batch.build())
                codes.append(part.error_code)
                if part.error_code:
                    break
                assert part.base_offset == len(acked)
                acked += values
            assert codes[-1] == ErrorCode.KAFKA_STORAGE_ERROR, codes
            assert acked
            # the same full disk answered in Produce v0's terms
            v0 = c.request(0, 0, produce_body(topic, 0, build_message_set([(None, b"z" * 60000)])))
            assert v0.responses[0].partition_responses[0].error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
            assert _fetch_values(c, topic, len(acked)) == acked

        broker.kill()  # a crash while the disk is full
        # ... and the restart must rebuild the index with no room for it: mapped index
        # pages without disk blocks were a SIGBUS, now the rebuild stops and says so
        for index in (data / f"{topic}-0").glob("*.index"):
            index.unlink()
        with contextlib.suppress(OSError), open(small_disk / "ballast-2", "wb", buffering=0) as f:
            while True:  # until ENOSPC
                f.write(b"\0" * 4096)
        lines = len(broker.lines)
        broker.restart()
        broker.wait_for_log(r"loaded \d+ topics")
        assert not any("Traceback" in line for line in broker.lines[lines:])
        assert any("no room to rebuild the index" in line for line in broker.lines[lines:])
        with WireClient(broker.bootstrap) as c:
            assert _fetch_values(c, topic, len(acked)) == acked
            part = c.request(1, 11, fetch_v11_body(topic, 0)).responses[0].partitions[0]
            assert part.high_watermark == len(acked)  # nothing unacknowledged appeared

            # space returns: the filesystem grows under the running broker
            grown = subprocess.run(["mount", "-o", "remount,size=16m", str(small_disk)], capture_output=True)
            assert grown.returncode == 0, grown.stderr
            batch = RecordBatchBuilder()
            batch.append(None, b"after", 1_700_000_000_000, [])
            part = _produce_v8(c, topic, batch.build())
            assert (part.error_code, part.base_offset) == (0, len(acked))
            assert _fetch_values(c, topic, len(acked) + 1) == [*acked, b"after"]
        assert broker.alive()
    finally:
        broker.kill()
