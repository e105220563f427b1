"""The garbage collector of a broker process: off while ``hmb serve`` starts, tuned once it listens,
and never touched in a process that only embeds a broker."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from pathlib import Path

import hmb
from hmb import gc_policy

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import gc, json, tempfile
from hmb import gc_policy

gc_policy.pause()
before = [s["collections"] for s in gc.get_stats()]
import trio
import hmb.cli
from hmb.broker import Broker
from hmb.config import from_properties

async def main():
    cfg = from_properties({"listeners": "127.0.0.1:0", "log.dirs": tempfile.mkdtemp()})
    async with trio.open_nursery() as nursery:
        await nursery.start(Broker(cfg).run)
        during = [s["collections"] for s in gc.get_stats()]
        enabled_while_starting = gc.isenabled()
        gc_policy.settle()
        print(json.dumps({
            "collections_while_starting": [d - b for d, b in zip(during, before)],
            "enabled_while_starting": enabled_while_starting,
            "enabled": gc.isenabled(),
            "threshold": gc.get_threshold(),
            "frozen": gc.get_freeze_count(),
        }))
        nursery.cancel_scope.cancel()

trio.run(main)
"""


def test_a_broker_process_starts_without_collecting_then_freezes_what_start_up_made() -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True
    )
    seen = json.loads(out.stdout.splitlines()[-1])
    assert seen["collections_while_starting"] == [0, 0, 0]
    assert seen["enabled_while_starting"] is False
    assert seen["enabled"] is True
    assert tuple(seen["threshold"]) == gc_policy.THRESHOLD
    # modules, classes and the property table: tens of thousands of objects no collection scans again
    assert seen["frozen"] > 10_000


def test_an_embedded_broker_leaves_its_hosts_collector_alone() -> None:
    before = (gc.isenabled(), gc.get_threshold(), gc.get_freeze_count())
    with hmb.Broker() as broker:
        assert broker.bootstrap_servers
        gc_policy.settle()  # what `hmb serve` calls once it listens: nothing here, no pause() ran
    assert (gc.isenabled(), gc.get_threshold(), gc.get_freeze_count()) == before
