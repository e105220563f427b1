"""Exactly-once under ``kill -9``: the issue's consume-transform-produce loop.

    python -m bench eos-kills [--records 200000] [--kills 30] [--target app|broker]

An exactly-once application (:mod:`bench.eos_app`, librdkafka: read_committed
input, transactional output, input offsets committed in each transaction)
processes ``--records`` messages while something is killed with SIGKILL at
random moments ``--kills`` times: the application (started again each
time, as a supervisor would), or the broker under it (restarted at once).
Then the application runs to the end, and the output is read back with
read_committed.  Printed as one JSON object: records, kills, output
messages, distinct ones, duplicates, missing, whether the output is exactly
the input in order, and the elapsed time.  The suite's short version is
``tests/interop/test_exactly_once_kills.py``.  With ``--cluster`` the loop runs
against three brokers (:mod:`bench.eos_cluster`), the broker killed being the
application's transaction coordinator.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from bench.hmb_process import BrokerProcess


@dataclass
class KillsOutcome:
    target: str
    records: int
    kills: int  # that landed while the application was at work
    output: int
    distinct: int
    duplicates: int
    missing: int
    exactly_once_in_order: bool
    elapsed_s: float


def fill(bootstrap: str, topic: str, records: int) -> list[bytes]:
    """Write the input: ``records`` numbered values to partition 0."""
    import confluent_kafka as ck

    values = [b"%09d" % i for i in range(records)]
    p = ck.Producer({"bootstrap.servers": bootstrap, "log_level": 3, "linger.ms": 5})
    for v in values:
        while True:
            try:
                p.produce(topic, v, partition=0)
                break
            except BufferError:
                p.poll(0.01)
    if p.flush(120) != 0:
        raise RuntimeError("the input was not written")
    return values


def start_app(bootstrap: str, name: str, records: int) -> subprocess.Popen[bytes]:
    args = [bootstrap, f"{name}-in", f"{name}-out", f"{name}-group", f"{name}-tx", str(records)]
    return subprocess.Popen([sys.executable, "-m", "bench.eos_app", *args], stderr=subprocess.PIPE)


def run_to_end(bootstrap: str, name: str, records: int, attempts: int = 5) -> None:
    """Run the application until it finishes (started again when it fails)."""
    err = b""
    for _attempt in range(attempts):
        app = start_app(bootstrap, name, records)
        _out, err = app.communicate(timeout=1800)
        if app.returncode == 0:
            return
    raise RuntimeError(f"the application never finished: {err[-2000:]!r}")


def read_output(bootstrap: str, topic: str, timeout: float = 300) -> list[bytes]:
    """Every committed value of the output, read with read_committed to its end."""
    import confluent_kafka as ck

    c = ck.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "eos-check",
            "enable.auto.commit": False,
            "isolation.level": "read_committed",
            "enable.partition.eof": True,
            "log_level": 3,
        }
    )
    try:
        c.assign([ck.TopicPartition(topic, 0, 0)])
        got: list[bytes] = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            msgs = c.consume(1000, 0.5)
            got += [m.value() or b"" for m in msgs if not m.error()]
            errors = [e.code() for m in msgs if (e := m.error()) is not None]
            if ck.KafkaError._PARTITION_EOF in errors:
                return got
        raise RuntimeError("the output was not read to its end")
    finally:
        c.close()


#: kills something while the application (given) works: the application itself or a broker
Kill = Callable[[subprocess.Popen[bytes]], None]


def kill_app(app: subprocess.Popen[bytes]) -> None:
    app.kill()
    app.wait(10)


def kill_loop(bootstrap: str, name: str, records: int, kills: int, kill: Kill, seed: int) -> int:
    """``kill`` up to ``kills`` times at random moments of the work; returns how many kills
    landed before the application finished."""
    rng = random.Random(seed)
    app = start_app(bootstrap, name, records)
    done = 0
    try:
        for _ in range(kills):
            time.sleep(rng.uniform(0.3, 1.0))  # a random moment of the application's work: the fault
            if app.poll() == 0:
                return done  # finished before this kill
            kill(app)
            done += 1
            if app.poll() is not None:  # killed, or failed with the broker: started again
                app = start_app(bootstrap, name, records)
        return done
    finally:
        app.kill()
        app.wait(10)


def run(broker: BrokerProcess, target: str, records: int, kills: int, seed: int = 0) -> KillsOutcome:
    def kill_broker(_app: subprocess.Popen[bytes]) -> None:
        broker.kill()
        broker.restart()

    kill = kill_app if target == "app" else kill_broker
    return run_with(broker.bootstrap, target, kill, records, kills, seed)


def run_with(
    bootstrap: str, target: str, kill: Kill, records: int, kills: int, seed: int = 0
) -> KillsOutcome:
    """The loop against the broker(s) at ``bootstrap``, ``kill`` being the fault (see above)."""
    name = f"eos-{target}"
    t0 = time.monotonic()
    values = fill(bootstrap, f"{name}-in", records)
    landed = kill_loop(bootstrap, name, records, kills, kill, seed)
    run_to_end(bootstrap, name, records)
    out = read_output(bootstrap, f"{name}-out")
    counts = Counter(out)
    expected = [b"out:" + v for v in values]
    return KillsOutcome(
        target=target,
        records=records,
        kills=landed,
        output=len(out),
        distinct=len(counts),
        duplicates=len(out) - len(counts),
        missing=len(set(expected) - counts.keys()),
        exactly_once_in_order=out == expected,
        elapsed_s=round(time.monotonic() - t0, 1),
    )


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench eos-kills", description=__doc__)
    ap.add_argument("--records", type=int, default=200_000, help="input messages (default 200000)")
    ap.add_argument("--kills", type=int, default=30, help="SIGKILLs during the run (default 30)")
    ap.add_argument("--target", choices=("app", "broker"), default="app", help="what is killed")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--cluster",
        action="store_true",
        help="three brokers on ZooKeeper, RF 3; --target broker kills the transaction coordinator",
    )
    args = ap.parse_args(argv)
    if args.cluster:
        from bench.eos_cluster import main as on_cluster

        return on_cluster(args.target, args.records, args.kills, args.seed)
    with tempfile.TemporaryDirectory(prefix="hmb-eos-") as tmp, BrokerProcess(Path(tmp) / "data") as broker:
        outcome = run(broker, args.target, args.records, args.kills, args.seed)
    print(json.dumps(asdict(outcome)))
    return 0 if outcome.exactly_once_in_order else 1
