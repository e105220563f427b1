"""The garbage collector of a broker process: off while ``hmb serve`` starts, the imports frozen,
tuned once it listens; and never touched in a process that only embeds a broker."""

from __future__ import annotations

import gc
import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import hmb
from hmb import gc_policy

ROOT = Path(__file__).resolve().parents[2]

IMPORTS_PROBE = """
import gc, json
from hmb import gc_policy

gc_policy.pause()
before = [s["collections"] for s in gc.get_stats()]
import hmb.cli
after = [s["collections"] for s in gc.get_stats()]
gc_policy.keep_imports()
print(json.dumps({
    "collections_while_importing": [a - b for a, b in zip(after, before)],
    "enabled": gc.isenabled(),
    "frozen": gc.get_freeze_count(),
}))
"""


def test_the_imports_run_without_collections_and_are_frozen() -> None:
    probe = [sys.executable, "-c", IMPORTS_PROBE]
    out = subprocess.run(probe, cwd=ROOT, capture_output=True, text=True, timeout=60, check=True)
    seen = json.loads(out.stdout.splitlines()[-1])
    assert seen["collections_while_importing"] == [0, 0, 0]
    assert seen["enabled"] is False  # on again only once the broker listens
    # modules, classes, functions and the property table: no collection scans them again
    assert seen["frozen"] > 10_000


@pytest.mark.parametrize("entry", [["hmb", "serve"], ["hmb_cmd", "serve"]])
def test_hmb_serve_freezes_its_imports_and_collects_again_once_it_listens(
    entry: list[str], tmp_path: Path
) -> None:
    args = ["--listen", "127.0.0.1:0", "--data-dir", str(tmp_path / "data"), "--log-level", "DEBUG"]
    proc = subprocess.Popen(
        [sys.executable, "-m", *entry, *args], cwd=ROOT, stderr=subprocess.PIPE, text=True
    )
    lines: list[str] = []
    try:
        assert proc.stderr is not None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            assert line, f"hmb serve ended early: {''.join(lines)}"
            lines.append(line)
            if "garbage collector: on" in line:
                break
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
    text = "".join(lines)
    frozen = re.search(r"garbage collector: (\d+) objects made by the imports frozen", text)
    assert frozen is not None and int(frozen.group(1)) > 10_000
    assert f"garbage collector: on, thresholds {gc_policy.THRESHOLD}" in text
    # frozen before the broker was built, on again only after it listens
    assert text.index("objects made by the imports frozen") < text.index("listening on")
    assert text.index("listening on") < text.index("garbage collector: on")


def test_an_embedded_broker_leaves_its_hosts_collector_alone() -> None:
    before = (gc.isenabled(), gc.get_threshold(), gc.get_freeze_count())
    with hmb.Broker() as broker:
        assert broker.bootstrap_servers
        # what hmb serve calls: nothing happens here, no pause() ran in this process
        gc_policy.keep_imports()
        gc_policy.resume()
    assert (gc.isenabled(), gc.get_threshold(), gc.get_freeze_count()) == before
