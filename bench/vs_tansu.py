"""hmb against Tansu with librdkafka's default settings, in the same run.

    python -m bench.vs_tansu --records 500000 --rounds 3 --out bench/results/vs-tansu.md

One client for both brokers: confluent-kafka (librdkafka) with its defaults
(ApiVersions, RecordBatch v2) plus the settings of the issue: 100-byte
records, ``acks=1``, ``batch.size`` 16384, ``linger.ms`` 5.  Per round and
broker (fresh broker each time, order alternating between rounds so machine
drift hits both alike):

* produce: records/s from the first ``produce()`` to ``flush()`` returning,
  every delivery report checked;
* consume: records/s of one consumer with ``assign()`` reading them all back
  from offset 0, twice: with librdkafka's defaults, and with
  ``queued.min.messages`` raised to 1,000,000.  With the defaults, once
  100,000 messages wait in the client's queue librdkafka stops fetching for
  ``fetch.queue.backoff.ms`` (1 s): a broker that answers fast fills the
  queue sooner and then idles, so that figure measures the client's
  back-off as much as the broker (seen with ``debug=fetch``: "Fetch backoff
  for 1000ms: Local: Queue full").  The second run keeps the queue open
  and measures how fast each broker serves;
* first assignment: seconds from ``subscribe()`` to the ``on_assign``
  callback for a fresh group with librdkafka defaults (the one number a
  user feels on every start).

Each measurement runs in its own process so one client's state never
leaks into the next.  Ratios are hmb / Tansu within a round.

``--classic`` adds a third broker per round, hmb answering as a broker whose
newest Produce is v8 and Fetch v11 (the control API's ``limit_versions``),
so that librdkafka uses the classic, non-flexible layouts of both (it has no
setting of its own to cap versions).  Both hmb brokers then run with the
control endpoint on, so the only difference between them is the versions
the client negotiates (flexible: Produce v10, Fetch v16 with librdkafka
2.16); the table adds the classic ratios and flexible / classic.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bench.hmb_process import BrokerProcess, free_port
from bench.studies import machine_info
from bench.tansu import TansuProcess
from hmb_client.tools.control import control_call

ROOT = Path(__file__).resolve().parents[1]

PRODUCE = r"""
import json, sys, time
import confluent_kafka as ck
bs, topic, n, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
p = ck.Producer({"bootstrap.servers": bs, "acks": 1, "linger.ms": 5, "batch.size": 16384, "log_level": 3})
failed = []
p.produce(topic, b"w", on_delivery=lambda err, msg: err and failed.append(err)); p.flush(30)
assert not failed, failed
v = b"x" * size
t0 = time.perf_counter()
for _ in range(n):
    while True:
        try:
            p.produce(topic, v, on_delivery=lambda err, msg: err and failed.append(err)); break
        except BufferError:
            p.poll(0.005)
left = p.flush(120)
elapsed = time.perf_counter() - t0
assert left == 0 and not failed, (left, failed[:3])
print(json.dumps({"records_per_s": n / elapsed}))
"""

CONSUME = r"""
import json, sys, time
import confluent_kafka as ck
bs, topic, n, extra = sys.argv[1], sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4])
c = ck.Consumer({"bootstrap.servers": bs, "group.id": "bench-assign", "enable.auto.commit": False,
                 "log_level": 3, **extra})
c.assign([ck.TopicPartition(topic, 0, 0)])
got = 0
t0 = time.perf_counter()
deadline = time.monotonic() + 300
while got < n and time.monotonic() < deadline:
    for m in c.consume(10000, 1.0):
        if m.error() is None:
            got += 1
elapsed = time.perf_counter() - t0
c.close()
assert got >= n, f"read {got} of {n}"
print(json.dumps({"records_per_s": n / elapsed}))
"""

FIRST_ASSIGNMENT = r"""
import json, sys, time
import confluent_kafka as ck
bs, topic = sys.argv[1], sys.argv[2]
c = ck.Consumer({"bootstrap.servers": bs, "group.id": f"bench-group-{time.time_ns()}", "log_level": 3})
assigned = []
t0 = time.perf_counter()
c.subscribe([topic], on_assign=lambda consumer, parts: assigned.append(time.perf_counter()))
deadline = time.monotonic() + 120
while not assigned and time.monotonic() < deadline:
    c.poll(0.05)
c.close()
assert assigned, "no assignment within 120 s"
print(json.dumps({"seconds": assigned[0] - t0}))
"""

BROKERS = ("hmb", "tansu")
CLASSIC_CAPS = {"PRODUCE": 8, "FETCH": 11}  # the newest versions before the flexible layouts


def _run(code: str, *args: object) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", code, *map(str, args)], cwd=ROOT, capture_output=True, text=True, timeout=900
    )
    if out.returncode:
        raise RuntimeError(f"benchmark client failed ({out.returncode}):\n{out.stderr[-2000:]}")
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def _create_topic(bootstrap: str, topic: str) -> None:
    """One partition, replication 1, through the admin API both brokers serve."""
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 3})
    for future in admin.create_topics([NewTopic(topic, 1, 1)]).values():
        future.result(30)


@contextmanager
def _broker(kind: str, control: bool = False) -> Iterator[str]:
    """``kind``: tansu, hmb, or hmb-classic (hmb capped at :data:`CLASSIC_CAPS`); ``control``:
    the hmb broker runs with its control endpoint on (as hmb-classic must)."""
    if kind == "tansu":
        with TansuProcess() as t:
            yield t.bootstrap
        return
    port = free_port()
    overrides = (f"control.listener=127.0.0.1:{port}",) if control or kind == "hmb-classic" else ()
    with (
        tempfile.TemporaryDirectory(prefix="hmb-vs-tansu-") as tmp,
        BrokerProcess(Path(tmp) / "data", *overrides) as b,
    ):
        if kind == "hmb-classic":
            b.wait_for_log("control endpoint")
            control_call(f"127.0.0.1:{port}", "limit_versions", {"caps": CLASSIC_CAPS}, timeout_s=10)
        yield b.bootstrap


def measure(kind: str, records: int, size: int, control: bool = False) -> dict[str, float]:
    with _broker(kind, control) as bootstrap:
        topic = "bench-vs-tansu"
        _create_topic(bootstrap, topic)
        produce = _run(PRODUCE, bootstrap, topic, records, size)["records_per_s"]
        consume = _run(CONSUME, bootstrap, topic, records, "{}")["records_per_s"]
        open_queue = json.dumps({"queued.min.messages": 1_000_000})
        consume_open = _run(CONSUME, bootstrap, topic, records, open_queue)["records_per_s"]
        first = _run(FIRST_ASSIGNMENT, bootstrap, topic)["seconds"]
    return {"produce": produce, "consume": consume, "consume_open": consume_open, "first_assignment_s": first}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m bench.vs_tansu",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--records", type=int, default=500_000, help="records produced then consumed per broker")
    ap.add_argument("--record-size", type=int, default=100, help="bytes per record value (default 100)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds; the broker order alternates (default 3)")
    ap.add_argument("--out", type=Path, help="also write the Markdown table to this file")
    ap.add_argument(
        "--classic",
        action="store_true",
        help="also run hmb capped at Produce v8 / Fetch v11 (librdkafka then uses the classic, "
        "non-flexible layouts) and report flexible against classic in the same round",
    )
    args = ap.parse_args(argv)

    header = (
        f"Machine: {machine_info()}; "
        f"{time.strftime('%Y-%m-%d %H:%M %Z')}; {args.records:,} records of {args.record_size} bytes.\n\n"
        "| round | order | hmb produce rec/s | Tansu produce rec/s | produce hmb/Tansu "
        "| hmb consume rec/s | Tansu consume rec/s | consume hmb/Tansu "
        "| hmb consume (open queue) | Tansu consume (open queue) | open queue hmb/Tansu "
        "| hmb first assignment s | Tansu first assignment s |\n"
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    )
    lines = [header]
    print(header, flush=True)
    ratios: dict[str, list[float]] = {"produce": [], "consume": [], "consume_open": []}
    kinds = (*BROKERS, "hmb-classic") if args.classic else BROKERS
    classic_rows: list[dict[str, dict[str, float]]] = []
    for rnd in range(args.rounds):
        order = kinds[rnd % len(kinds) :] + kinds[: rnd % len(kinds)] if args.classic else kinds
        order = order if rnd % 2 == 0 else order[::-1]
        res = {kind: measure(kind, args.records, args.record_size, args.classic) for kind in order}
        classic_rows.append(res)
        h, t = res["hmb"], res["tansu"]
        for key in ratios:
            ratios[key].append(h[key] / t[key])
        line = (
            f"| {rnd + 1} | {' > '.join(order)} | {h['produce']:,.0f} | {t['produce']:,.0f} "
            f"| {h['produce'] / t['produce']:.2f} | {h['consume']:,.0f} | {t['consume']:,.0f} "
            f"| {h['consume'] / t['consume']:.2f} | {h['consume_open']:,.0f} | {t['consume_open']:,.0f} "
            f"| {h['consume_open'] / t['consume_open']:.2f} | {h['first_assignment_s']:.2f} "
            f"| {t['first_assignment_s']:.2f} |"
        )
        lines.append(line)
        print(line, flush=True)
    summary = (
        f"\nMedian ratio hmb/Tansu: produce {statistics.median(ratios['produce']):.2f}, "
        f"consume {statistics.median(ratios['consume']):.2f}, "
        f"consume with an open queue {statistics.median(ratios['consume_open']):.2f}."
    )
    print(summary)
    if args.classic:
        summary += "\n\n" + "\n".join(_classic_table(classic_rows))
        print(summary.split("\n\n", 1)[1])
    if args.out:
        args.out.write_text("\n".join(lines) + "\n" + summary + "\n")
    return 0


def _classic_table(rows: list[dict[str, dict[str, float]]]) -> list[str]:
    """Flexible (hmb) against classic (hmb-classic) versions, each as a ratio to Tansu in its round."""
    out = [
        "Flexible against classic versions (hmb with control endpoint in both; classic = capped at "
        "Produce v8 / Fetch v11), ratios to Tansu in the same round:",
        "",
        "| round | produce flexible/Tansu | produce classic/Tansu | produce flexible/classic "
        "| consume (open queue) flexible/Tansu | classic/Tansu | consume flexible/classic |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    per: dict[str, list[float]] = {"produce": [], "consume_open": []}
    for rnd, res in enumerate(rows, 1):
        flex, classic, t = res["hmb"], res["hmb-classic"], res["tansu"]
        cells = []
        for key in per:
            per[key].append(flex[key] / classic[key])
            cells += [flex[key] / t[key], classic[key] / t[key], flex[key] / classic[key]]
        out.append(f"| {rnd} | " + " | ".join(f"{c:.2f}" for c in cells) + " |")
    out.append(
        f"\nMedian flexible/classic: produce {statistics.median(per['produce']):.3f}, "
        f"consume (open queue) {statistics.median(per['consume_open']):.3f}."
    )
    return out


if __name__ == "__main__":
    sys.exit(main())
