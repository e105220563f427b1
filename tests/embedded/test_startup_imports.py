"""What ``hmb serve`` imports before it answers: nothing its start does not need.

numpy (the offset index's lookups) and the crc32c package's version lookup
through importlib.metadata together were over half of the start-up; both are
loaded on first use now, as is cramjam (the snappy, lz4 and zstd codecs).
A broker alone (no ``zookeeper.connect``) loads nothing of the cluster and no
ZooKeeper client, one without ``authorizer.class.name`` no ACL model, and
no handler module is imported before its key is first spoken (the registry
is built from the handler index, :mod:`hmb.api.registry`).  A test run
starts a fresh interpreter so that nothing imported by pytest itself hides
an import.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import json, sys, tempfile, trio
import hmb.cli
from hmb.broker import Broker
from hmb.config import from_properties

async def main():
    cfg = from_properties({"listeners": "127.0.0.1:0", "log.dirs": tempfile.mkdtemp()})
    async with trio.open_nursery() as nursery:
        await nursery.start(Broker(cfg).run)
        nursery.cancel_scope.cancel()

trio.run(main)
late = ("numpy", "importlib.metadata", "crc32c", "cramjam", "hmb.control", "kazoo", "hmb.cluster.node",
        "hmb.security.authorizer", "hmb.api.produce", "hmb.api.fetch", "hmb.api.metadata")
print(json.dumps(sorted(m for m in late if m in sys.modules)))
"""


def test_a_fresh_broker_starts_without_what_its_start_does_not_need() -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True
    )
    assert json.loads(out.stdout.splitlines()[-1]) == []


def test_the_crc_is_the_packages_function() -> None:
    import crc32c as package

    from kproto.records.crc import crc32c

    assert crc32c(b"123456789") == package.crc32c(b"123456789") == 0xE3069283
    assert crc32c(b"tail", crc32c(b"head")) == package.crc32c(b"headtail")
