"""hmb as the Kafka of a test suite: start-up, memory and per-test cost, against Tansu in the same run.

    python -m bench.embedded                 # everything below, a few minutes on 2 cores
    python -m bench.embedded --quick         # 3 runs of each, not 9
    python -m bench.embedded --startup 20    # only the start-up ratio, 20 interleaved pairs

Measures, each repeated and reported as median (and min):

* ``import trio``: the interpreter plus trio, the yardstick for start-up;
* first ApiVersions answered by ``hmb serve`` (a subprocess, from spawn) and
  by Tansu (a subprocess, memory storage): the ratio to ``import trio``;
* start-to-first-produce: from "start a broker" to the first record
  acknowledged by librdkafka (acks=all), for an embedded hmb
  (``hmb.Broker``), an hmb subprocess and Tansu;
* an embedded broker's start and stop alone, and the resident memory an
  idle embedded broker adds to the process (RSS before and after starting
  ten of them, per broker; and a fresh interpreter's growth from importing
  hmb and starting the first one);
* creating and deleting a one-partition topic: through the control API and
  over the wire (CreateTopics/DeleteTopics on a fresh connection each);
* the per-test overhead of the plugin's per-test fixture and a suite of 200
  tests, each with its own broker (a pytest subprocess, against the same
  200 tests sharing one broker).

Ratios are against peers measured in the same run on the same machine;
nothing here asserts a wall-clock number.  Subprocesses run with compiled
bytecode, as from an installed package (``pip install`` compiles it): the
environment may set ``PYTHONDONTWRITEBYTECODE``, under which every start
would recompile hmb's sources while trio's come precompiled, so the runs
here use a bytecode cache of their own (``PYTHONPYCACHEPREFIX``), warmed
by one start before measuring.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.hmb_process import ROOT, free_port
from bench.tansu import TansuUnavailableError, tansu_binary

_API_VERSIONS_V0 = struct.pack(">hhih", 18, 0, 1, 0)


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
            s.sendall(struct.pack(">i", len(_API_VERSIONS_V0)) + _API_VERSIONS_V0)
            head = s.recv(8)
            return len(head) == 8 and struct.unpack(">i", head[4:8])[0] == 1
    except OSError:
        return False


_PYC = Path(tempfile.gettempdir()) / "hmb-bench-pycache"


def _env() -> dict[str, str]:
    """The environment of measured subprocesses: our sources on the path, bytecode cached."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPATH": str(ROOT), "PYTHONPYCACHEPREFIX": str(_PYC)}


def _until_answered(args: list[str], port: int, env: dict[str, str] | None = None) -> float:
    """Seconds from spawning ``args`` until ``port`` answers ApiVersions (polled every millisecond)."""
    started = time.perf_counter()
    proc = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        while not _answers(port):
            if proc.poll() is not None:
                raise RuntimeError(f"{args[0]} exited with {proc.returncode}")
            time.sleep(0.001)  # polling a port: a process gives no other readiness signal
        return time.perf_counter() - started
    finally:
        proc.kill()
        proc.wait()


def _hmb_args(port: int, data_dir: str) -> list[str]:
    return [sys.executable, "-m", "hmb", "serve", "--listen", f"127.0.0.1:{port}", "--data-dir", data_dir]


def _tansu_args(port: int) -> list[str]:
    url = f"tcp://127.0.0.1:{port}"
    return [
        str(tansu_binary()),
        "broker",
        "--listener-url",
        url,
        "--advertised-listener-url",
        url,
        "--storage-engine",
        "memory://tansu/",
    ]


def import_trio() -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import trio"], check=True, env=_env())
    return time.perf_counter() - started


def hmb_first_api_versions() -> float:
    port = free_port()
    with tempfile.TemporaryDirectory() as d:
        return _until_answered(_hmb_args(port, d), port, _env())


def tansu_first_api_versions() -> float:
    port = free_port()
    return _until_answered(_tansu_args(port), port)


def _first_produce(bootstrap: str) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 0})
    acked: list[object] = []
    producer.produce("first", b"x", on_delivery=lambda err, _m: acked.append(err))
    producer.flush(30)
    if acked != [None]:
        raise RuntimeError(f"first produce failed: {acked}")


def embedded_first_produce() -> float:
    import hmb

    started = time.perf_counter()
    with hmb.Broker() as broker:
        _first_produce(broker.bootstrap_servers)
        return time.perf_counter() - started


def subprocess_first_produce(args: Callable[[int], list[str]]) -> float:
    port = free_port()
    started = time.perf_counter()
    proc = subprocess.Popen(
        args(port), cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_env()
    )
    try:
        while not _answers(port):
            time.sleep(0.001)
        _first_produce(f"127.0.0.1:{port}")
        return time.perf_counter() - started
    finally:
        proc.kill()
        proc.wait()


def embedded_start_stop() -> tuple[float, float]:
    import hmb

    started = time.perf_counter()
    broker = hmb.Broker().start()
    up = time.perf_counter() - started
    broker.stop()
    return up, time.perf_counter() - started - up


def _rss() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def idle_embedded_memory(count: int = 10) -> float:
    """Bytes of resident memory one idle embedded broker adds (the mean of ``count``)."""
    import hmb

    hmb.Broker().start().stop()  # imports and first-use caches are not the broker's
    before = _rss()
    brokers = [hmb.Broker().start() for _ in range(count)]
    after = _rss()
    for b in brokers:
        b.stop()
    return (after - before) / count


def topic_create_delete(n: int = 50) -> dict[str, float]:
    """Median seconds to create and to delete a one-partition topic, by control API and by wire."""
    import hmb
    from hmb.pytest_plugin import ExternalBroker

    out: dict[str, float] = {}
    with hmb.Broker() as broker:
        wire = ExternalBroker(broker.bootstrap_servers)
        for way, target in (("control", broker), ("wire", wire)):
            created, deleted = [], []
            for i in range(n):
                started = time.perf_counter()
                target.create_topic(f"{way}-{i}")
                created.append(time.perf_counter() - started)
                started = time.perf_counter()
                target.delete_topic(f"{way}-{i}")
                deleted.append(time.perf_counter() - started)
            out[f"{way}_create_s"] = statistics.median(created)
            out[f"{way}_delete_s"] = statistics.median(deleted)
    return out


_FIRST_BROKER_RSS = """
import json
def rss():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmRSS:"))
base = rss()
import hmb
broker = hmb.Broker().start()
print(json.dumps(rss() - base))
broker.stop()
"""


def first_embedded_memory() -> int:
    """Bytes of resident memory a fresh interpreter gains by importing hmb and starting one broker."""
    out = subprocess.run(
        [sys.executable, "-c", _FIRST_BROKER_RSS], check=True, capture_output=True, text=True, env=_env()
    )
    return int(json.loads(out.stdout.strip().splitlines()[-1]))


_SUITE = """
import pytest

@pytest.mark.parametrize("i", range({n}))
def test_one(i, {fixture}):
    assert {fixture}.bootstrap_servers
"""


def suite_time(fixture: str, n: int) -> float:
    """Wall time of a pytest run of ``n`` trivial tests, each using ``fixture``."""
    with tempfile.TemporaryDirectory() as d:
        Path(d, "test_suite.py").write_text(_SUITE.format(n=n, fixture=fixture))
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "hmb.pytest_plugin", "-p", "no:cacheprovider", d],
            check=True,
            cwd=d,
            stdout=subprocess.DEVNULL,
            env=_env(),
        )
        return time.perf_counter() - started


def _stats(samples: list[float]) -> dict[str, float]:
    return {"median": statistics.median(samples), "min": min(samples), "n": len(samples)}


def startup(repeat: int) -> dict[str, Any]:
    """``import trio`` and ``hmb serve``'s first ApiVersions, interleaved so both see the same load."""
    import_trio(), hmb_first_api_versions()  # warm the bytecode cache
    pairs = [(import_trio(), hmb_first_api_versions()) for _ in range(repeat)]
    out: dict[str, Any] = {
        "import_trio_s": _stats([t for t, _ in pairs]),
        "hmb_serve_first_api_versions_s": _stats([h for _, h in pairs]),
    }
    trio_s = out["import_trio_s"]["median"]
    out["ratio_hmb_serve_to_import_trio"] = out["hmb_serve_first_api_versions_s"]["median"] / trio_s
    # the minimum is the run least disturbed by other load on the machine
    out["ratio_hmb_serve_to_import_trio_min"] = (
        out["hmb_serve_first_api_versions_s"]["min"] / out["import_trio_s"]["min"]
    )
    # each pair ran back to back: the median of their ratios cancels slower drifts in load
    out["ratio_hmb_serve_to_import_trio_pairs"] = statistics.median(h / t for t, h in pairs)
    return out


def run(repeat: int, suite_n: int) -> dict[str, Any]:
    try:
        tansu_binary()
        have_tansu = True
    except TansuUnavailableError:
        have_tansu = False
    out = startup(repeat)
    if have_tansu:
        out["tansu_first_api_versions_s"] = _stats([tansu_first_api_versions() for _ in range(repeat)])
    out["first_produce_embedded_s"] = _stats([embedded_first_produce() for _ in range(repeat)])
    with tempfile.TemporaryDirectory() as d:
        out["first_produce_hmb_subprocess_s"] = _stats(
            [subprocess_first_produce(lambda p: _hmb_args(p, d + f"/{p}")) for _ in range(repeat)]
        )
    if have_tansu:
        out["first_produce_tansu_s"] = _stats([subprocess_first_produce(_tansu_args) for _ in range(repeat)])
    starts = [embedded_start_stop() for _ in range(max(repeat, 20))]
    out["embedded_start_s"] = _stats([s for s, _ in starts])
    out["embedded_stop_s"] = _stats([s for _, s in starts])
    out["idle_embedded_rss_bytes"] = idle_embedded_memory()
    out["first_embedded_rss_bytes_with_imports"] = first_embedded_memory()
    out["topic_create_delete"] = topic_create_delete()
    suites = [
        (suite_time("hmb_broker", suite_n), suite_time("hmb_fresh_broker", suite_n)) for _ in range(repeat)
    ]
    shared = statistics.median(s for s, _ in suites)
    own = statistics.median(o for _, o in suites)
    out[f"suite_{suite_n}_tests_shared_broker_s"] = shared
    out[f"suite_{suite_n}_tests_broker_each_s"] = own
    # two estimates: the suites' difference (noisy: pytest's own start varies as much) and start+stop
    out["per_test_fixture_overhead_s"] = (own - shared) / suite_n
    out["per_test_start_plus_stop_s"] = out["embedded_start_s"]["median"] + out["embedded_stop_s"]["median"]
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=textwrap.dedent(__doc__ or ""))
    parser.add_argument(
        "--quick", action="store_true", help="3 repetitions instead of 9, 50 tests instead of 200"
    )
    parser.add_argument(
        "--startup", type=int, metavar="N", help="only the start-up ratio, from N interleaved pairs"
    )
    args = parser.parse_args(argv)
    result = startup(args.startup) if args.startup else run(3 if args.quick else 9, 200)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
