"""What TLS and SASL cost: produce and fetch over SASL_SSL as a ratio to PLAINTEXT, in the
same run and the same broker process, and authentication handshakes per second.

    python -m bench.security --records 200000 --rounds 3 --out bench/results/security.md

One ``hmb serve`` process with a PLAINTEXT and a SASL_SSL listener (test
certificates made for the run, SCRAM-SHA-256 and PLAIN users).  One client:
confluent-kafka (librdkafka) with 100-byte records, ``acks=1``,
``linger.ms`` 5; each measurement in its own process.  Per round and
listener (order alternating between rounds): produce records/s (every
delivery report checked), then consume records/s with ``assign()`` from
offset 0 (``queued.min.messages`` raised so the client's back-off does not
hide the broker).  Fetch over TLS cannot use sendfile: the consume ratio
is what that costs.

Handshakes: sequential fresh connections, each doing TCP, TLS, ApiVersions,
SaslHandshake and the mechanism's SaslAuthenticate exchange, for
SCRAM-SHA-256 (4096 iterations) and PLAIN; connections per second.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import ssl
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
USER, PASSWORD = "bench", "bench-secret"


def _start_broker(workdir: Path) -> tuple[subprocess.Popen[str], dict[str, int], Path]:
    sys.path.insert(0, str(ROOT / "tests" / "support"))
    from certs import make_pki  # type: ignore[import-not-found]

    from hmb.security.credentials import CredentialStore
    from hmb.security.scram import salted_password

    pki = make_pki(workdir / "pki")
    data = workdir / "data"
    data.mkdir(parents=True)
    salt = os.urandom(16)
    CredentialStore(data / "scram-credentials.json").upsert(
        USER, "SCRAM-SHA-256", salted_password("sha256", PASSWORD, salt, 4096), salt, 4096
    )
    jaas = f'org.apache.kafka.common.security.plain.PlainLoginModule required user_{USER}="{PASSWORD}";'
    overrides = [
        "listeners=PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0",
        f"ssl.keystore.location={pki.server}",
        f"listener.name.sasl_ssl.plain.sasl.jaas.config={jaas}",
        f"log.dirs={data}",
    ]
    args = [sys.executable, "-m", "hmb", "serve"]
    for o in overrides:
        args += ["--override", o]
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        args, cwd=ROOT, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=env
    )
    ports: dict[str, int] = {}
    assert proc.stderr is not None
    deadline = time.monotonic() + 60
    while len(ports) < 2 and time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            raise RuntimeError("the broker did not start")
        m = re.search(r"listening on [\d.]+:(\d+) \(listener (\w+)", line)
        if m:
            ports[m.group(2)] = int(m.group(1))
    if len(ports) < 2:
        raise RuntimeError(f"the broker did not report both listeners: {ports}")
    threading.Thread(target=_drain, args=(proc.stderr,), daemon=True).start()  # a full pipe would block it
    return proc, ports, pki.ca


def _drain(stream: Any) -> None:
    for _ in stream:
        pass


# ------------------------------------------------------------------ one measurement per process

_MEASURE = r"""
import json, sys, time, uuid
from confluent_kafka import Consumer, Producer, TopicPartition
bootstrap, settings, records, topic = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
value = b"x" * 100
failed = []
p = Producer({"bootstrap.servers": bootstrap, "acks": 1, "linger.ms": 5, "batch.size": 16384, **settings})
p.produce(topic, value); p.flush(30)  # metadata and the topic exist before the clock starts
start = time.perf_counter()
for i in range(records):
    while True:
        try:
            p.produce(topic, value, on_delivery=lambda e, m: e and failed.append(e)); break
        except BufferError:
            p.poll(0.01)
p.flush(120)
produce_s = time.perf_counter() - start
assert not failed, failed[:3]
c = Consumer({"bootstrap.servers": bootstrap, "group.id": "b" + uuid.uuid4().hex, "enable.auto.commit": False,
              "queued.min.messages": 1000000, **settings})
c.assign([TopicPartition(topic, 0, 0)])
got = 0; start = time.perf_counter()
while got < records + 1:
    for m in c.consume(min(10000, records + 1 - got), 1.0):  # never waits for more than remain
        if m.error() is None: got += 1
consume_s = time.perf_counter() - start
c.close()
print(json.dumps({"produce": records / produce_s, "consume": (records + 1) / consume_s}))
"""


def _measure(bootstrap: str, settings: dict[str, str], records: int, topic: str) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", _MEASURE, bootstrap, json.dumps(settings), str(records), topic],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------ handshakes


def _frame(api_key: int, version: int, cid: int, body: bytes) -> bytes:
    header = struct.pack(">hhih", api_key, version, cid, 5) + b"bench"
    return struct.pack(">i", len(header) + len(body)) + header + body


def _read_frame(sock: ssl.SSLSocket) -> bytes:
    def exact(n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = sock.recv(n - len(data))
            if not chunk:
                raise EOFError
            data += chunk
        return data

    return exact(struct.unpack(">i", exact(4))[0])


def _handshake_once(port: int, context: ssl.SSLContext, mechanism: str) -> None:
    from hmb_client.sasl import client_for

    raw = socket.create_connection(("127.0.0.1", port))
    raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # as Kafka's clients: no Nagle wait
    with raw, context.wrap_socket(raw, server_hostname="127.0.0.1") as s:
        s.sendall(_frame(18, 0, 1, b""))
        _read_frame(s)
        name = mechanism.encode()
        s.sendall(_frame(17, 1, 2, struct.pack(">h", len(name)) + name))
        assert _read_frame(s)[4:6] == b"\0\0"
        client = client_for(mechanism, USER, PASSWORD)
        token: bytes | None = client.first()
        cid = 3
        while token is not None:
            s.sendall(_frame(36, 1, cid, struct.pack(">i", len(token)) + token))
            answer = _read_frame(s)[4:]
            error = struct.unpack(">h", answer[:2])[0]
            assert error == 0, f"authentication failed ({error})"
            (mlen,) = struct.unpack(">h", answer[2:4])
            rest = answer[4 + max(mlen, 0) :]
            (tlen,) = struct.unpack(">i", rest[:4])
            token = client.answer(rest[4 : 4 + tlen])
            cid += 1


def _handshakes_per_s(port: int, ca: Path, mechanism: str, seconds: float) -> float:
    context = ssl.create_default_context(cafile=str(ca))
    done, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        _handshake_once(port, context, mechanism)
        done += 1
    return done / (time.perf_counter() - start)


# ------------------------------------------------------------------ the run


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.security", description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=200_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--handshake-seconds", type=float, default=10.0)
    ap.add_argument("--out", type=Path)
    ns = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="hmb-bench-security-") as tmp:
        proc, ports, ca = _start_broker(Path(tmp))
        try:
            listeners = {
                "PLAINTEXT": (f"127.0.0.1:{ports['PLAINTEXT']}", {}),
                "SASL_SSL": (
                    f"127.0.0.1:{ports['SASL_SSL']}",
                    {
                        "security.protocol": "SASL_SSL",
                        "ssl.ca.location": str(ca),
                        "sasl.mechanisms": "SCRAM-SHA-256",
                        "sasl.username": USER,
                        "sasl.password": PASSWORD,
                    },
                ),
            }
            rows: list[dict[str, float]] = []
            for r in range(ns.rounds):
                order = list(listeners) if r % 2 == 0 else list(reversed(listeners))
                result: dict[str, float] = {}
                for name in order:
                    bootstrap, settings = listeners[name]
                    got = _measure(bootstrap, settings, ns.records, f"bench-{name.lower()}-{r}")
                    result[f"{name} produce"], result[f"{name} consume"] = got["produce"], got["consume"]
                    rates = f"produce {got['produce']:,.0f}/s consume {got['consume']:,.0f}/s"
                    print(f"round {r + 1} {name}: {rates}", flush=True)
                rows.append(result)
            handshakes = {
                m: _handshakes_per_s(ports["SASL_SSL"], ca, m, ns.handshake_seconds)
                for m in ("SCRAM-SHA-256", "PLAIN")
            }
        finally:
            proc.terminate()
            proc.wait(30)
    report = _report(rows, handshakes, ns)
    print(report)
    if ns.out is not None:
        ns.out.write_text(report)
    return 0


def _report(rows: list[dict[str, float]], handshakes: dict[str, float], ns: argparse.Namespace) -> str:
    lines = [
        "# TLS and SASL cost (hmb, same run, same broker process)",
        "",
        f"{ns.records:,} records of 100 bytes per round, {ns.rounds} rounds, confluent-kafka "
        f"{_version()}; SASL_SSL with SCRAM-SHA-256. Machine: {os.cpu_count()} vCPU.",
        "",
        "| round | PLAINTEXT produce/s | SASL_SSL produce/s | ratio "
        "| PLAINTEXT consume/s | SASL_SSL consume/s | ratio |",
        "|---|---|---|---|---|---|---|",
    ]
    for i, r in enumerate(rows, 1):
        lines.append(
            f"| {i} | {r['PLAINTEXT produce']:,.0f} | {r['SASL_SSL produce']:,.0f} | "
            f"{r['SASL_SSL produce'] / r['PLAINTEXT produce']:.2f} | {r['PLAINTEXT consume']:,.0f} | "
            f"{r['SASL_SSL consume']:,.0f} | {r['SASL_SSL consume'] / r['PLAINTEXT consume']:.2f} |"
        )
    produce = statistics.median(r["SASL_SSL produce"] / r["PLAINTEXT produce"] for r in rows)
    consume = statistics.median(r["SASL_SSL consume"] / r["PLAINTEXT consume"] for r in rows)
    lines += [
        "",
        f"Median ratio SASL_SSL / PLAINTEXT: produce **{produce:.2f}**, consume **{consume:.2f}**.",
        "",
        "Authentication handshakes (TCP + TLS + ApiVersions + SaslHandshake + SaslAuthenticate, sequential):",
        "",
        *[f"* {m}: **{v:,.0f}/s**" for m, v in handshakes.items()],
        "",
        "Tansu is not measured: bench/tansu.py starts it without TLS or SASL, "
        "and configuring its SASL listener was left for later.",
        "",
    ]
    return "\n".join(lines)


def _version() -> str:
    try:
        import confluent_kafka

        return str(confluent_kafka.version()[0])
    except ImportError:  # pragma: no cover
        return "?"


if __name__ == "__main__":
    sys.exit(main())
