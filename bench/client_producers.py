"""Producer throughput of three clients against the same hmb broker, in the same run.

    python -m bench.client_producers --records 1000000 --rounds 3

Clients: ``hmb perf produce`` (hmb_client), kafka-python's KafkaProducer
and librdkafka through confluent-kafka, all with 100-byte records,
``batch_size`` 16384, ``linger_ms`` 5, ``acks=1``, idempotence off.  By
default every client negotiates versions with ApiVersions and writes
RecordBatch v2, as each does out of the box (hmb_client too); ``--legacy``
pins the two others to Kafka 0.8.2 (MessageSet v0/v1; kafka-python
``api_version=(0, 8, 2)``, librdkafka ``broker.version.fallback``), as the
thesis-era comparison did.  Each round starts a fresh broker and runs the
clients one after another in a rotated order, so drift on a shared machine
hits each alike; ratios are computed within a round.  Each client runs in
its own process.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from bench.hmb_process import BrokerProcess  # noqa: E402

KAFKA_PYTHON = r"""
import sys, time
from kafka import KafkaProducer
bs, topic, n, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
legacy = {"api_version": (0, 8, 2)} if sys.argv[5] == "legacy" else {}
p = KafkaProducer(bootstrap_servers=bs, acks=1, linger_ms=5, batch_size=16384, enable_idempotence=False,
                  **legacy)
p.send(topic, b"w").get(30)
v = b"x" * size
t0 = time.perf_counter()
for _ in range(n):
    p.send(topic, v)
p.flush()
print(n / (time.perf_counter() - t0))
p.close()
"""

LIBRDKAFKA = r"""
import sys, time
import confluent_kafka as ck
bs, topic, n, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
legacy = {"api.version.request": False, "broker.version.fallback": "0.8.2"} if sys.argv[5] == "legacy" else {}
p = ck.Producer({"bootstrap.servers": bs, "acks": 1, "linger.ms": 5, "batch.size": 16384, "log_level": 3,
                 "enable.idempotence": False, **legacy})
p.produce(topic, b"w"); p.flush(30)
v = b"x" * size
failed = []
t0 = time.perf_counter()
for _ in range(n):
    while True:
        try:
            p.produce(topic, v, on_delivery=lambda err, msg: err and failed.append(err)); break
        except BufferError:
            p.poll(0.01)
p.flush()
assert not failed, failed[:3]
print(n / (time.perf_counter() - t0))
"""

CLIENTS = ["hmb_client", "kafka-python", "librdkafka"]


def run_client(kind: str, bootstrap: str, topic: str, n: int, size: int, legacy: bool = False) -> float:
    py = sys.executable
    if kind == "hmb_client":
        out = subprocess.run(
            [
                py,
                "-m",
                "hmb_cmd",
                "perf",
                "produce",
                "--topic",
                topic,
                "--num-records",
                str(n),
                "--record-size",
                str(size),
                "--batch-size",
                "16384",
                "--linger-ms",
                "5",
                "--json",
                "--bootstrap-server",
                bootstrap,
            ],
            cwd=ROOT,
            capture_output=True,
            check=True,
            text=True,
        ).stdout
        report = json.loads(out)
        if report["records"] != n:
            raise RuntimeError(f"hmb perf produce acknowledged {report['records']} of {n}")
        return float(report["msgs_per_s"])
    code = KAFKA_PYTHON if kind == "kafka-python" else LIBRDKAFKA
    out = subprocess.run(
        [py, "-c", code, bootstrap, topic, str(n), str(size), "legacy" if legacy else "modern"],
        cwd=ROOT,
        capture_output=True,
        check=True,
        text=True,
    ).stdout
    return float(out.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m bench.client_producers",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--records", type=int, default=1_000_000, help="records per client per round")
    ap.add_argument("--record-size", type=int, default=100, help="bytes per record value")
    ap.add_argument(
        "--rounds", type=int, default=3, help="rounds, each with a fresh broker and rotated order"
    )
    ap.add_argument(
        "--legacy",
        action="store_true",
        help="pin kafka-python and librdkafka to Kafka 0.8.2 (MessageSet v0/v1)",
    )
    args = ap.parse_args(argv)
    mode = "legacy 0.8.2 peers" if args.legacy else "every client negotiating (RecordBatch v2)"
    when = time.strftime("%Y-%m-%d %H:%M")
    print(f"# {platform.machine()}, Python {platform.python_version()}, {when}, {mode}")
    print(
        "round | order | hmb_client msg/s | kafka-python msg/s | librdkafka msg/s"
        " | hmb/kafka-python | hmb/librdkafka"
    )
    for rnd in range(args.rounds):
        order = CLIENTS[rnd % 3 :] + CLIENTS[: rnd % 3]
        rates: dict[str, float] = {}
        with (
            tempfile.TemporaryDirectory(prefix="hmb-clients-") as tmp,
            BrokerProcess(Path(tmp) / "data") as broker,
        ):
            for kind in order:
                rates[kind] = run_client(
                    kind, broker.bootstrap, f"{kind}-{rnd}", args.records, args.record_size, args.legacy
                )
        h, k, r = rates["hmb_client"], rates["kafka-python"], rates["librdkafka"]
        print(
            f"{rnd + 1} | {' > '.join(order)} | {h:,.0f} | {k:,.0f} | {r:,.0f} | {h / k:.2f} | {h / r:.2f}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
