"""kproto's codec against kafka-python's JSON-spec-driven codec, on the same frames, in the same run.

    python -m bench.kproto_codec                 # under a minute on 2 cores
    python -m bench.kproto_codec --quick         # a few seconds
    python -m bench.kproto_codec --out FILE.md   # also write the table as Markdown
    python -m bench.kproto_codec --freeze --floor # imports frozen first; the bound of the speed-up

What: three large responses, each at a classic version and at flexible ones,
whole frames (size, header, body) both ways:

* a Metadata response (v1, v9, v12): 3 brokers, 100 topics of 10 partitions
  each (replicas and ISR of 3, topic ids where the version has them, no
  tagged fields set);
* a Fetch response (v11, v12, v16): 50 partitions in 5 topics, each with a
  1 KiB record set (kept as bytes by both codecs);
* a Produce response (v8, v9, v11, v13): 50 partitions in 5 topics.

kproto is ``kproto.decode_response`` / ``kproto.encode_response``;
kafka-python is 3.x's ``kafka.protocol`` message classes (generated from
Kafka's JSON message specs), ``decode(frame, header=True, framed=True)`` and
``encode(header=True, framed=True)``.  Before measuring, every case checks
that both codecs encode byte-identical frames and that kproto re-encodes
what it decoded to the same bytes.

How: rounds interleave every (case, codec, direction), so a drift of a
shared machine touches all alike; each sample is the mean of a batch of
calls, and the table gives the minimum and the median of the samples (µs
per call) and the speed-up ``kafka-python / kproto`` of each.  The cyclic
garbage collector runs as in any process: a decoded Metadata response is
thousands of tracked objects, so every twenty or so decodes a full
collection scans every object of the process (some 57,000 here, mostly
what the imports made), which adds about as much to either codec and
squeezes their ratio.  ``--freeze`` first freezes what exists
(``gc.freeze()``, as ``hmb serve`` does after its imports): collections go
on, but no longer rescan the imports.  Nothing is asserted: the target
(kproto at least 3x faster on Metadata v12 and Fetch v16, both ways) is
read from the table.  With ``--floor``, a second table bounds the decode
speed-up any decoder into kproto's values could reach (see :func:`floor`).
``bench/micro/test_messages_bench.py`` measures the same cases with
pytest-benchmark and runs them once as a correctness test.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import struct
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from construct import Container
from kafka.protocol.consumer.fetch import FetchResponse
from kafka.protocol.metadata.metadata import MetadataResponse
from kafka.protocol.producer import ProduceResponse

import kproto
from kproto.primitives import ReadOnlyContainer

METADATA_VERSIONS = (1, 9, 12)
FETCH_VERSIONS = (11, 12, 16)
PRODUCE_VERSIONS = (8, 9, 11, 13)


def _metadata_body() -> dict[str, Any]:
    brokers = [{"node_id": i, "host": f"broker-{i}.example", "port": 9092, "rack": None} for i in range(3)]
    topics = [
        {
            "error_code": 0,
            "name": f"topic-{t:03d}",
            "topic_id": os.urandom(16),
            "is_internal": False,
            "partitions": [
                {
                    "error_code": 0,
                    "partition_index": p,
                    "leader_id": p % 3,
                    "leader_epoch": 7,
                    "replica_nodes": [p % 3, (p + 1) % 3, (p + 2) % 3],
                    "isr_nodes": [p % 3, (p + 1) % 3, (p + 2) % 3],
                    "offline_replicas": [],
                }
                for p in range(10)
            ],
            "topic_authorized_operations": -(2**31),
        }
        for t in range(100)
    ]
    return {
        "throttle_time_ms": 0,
        "brokers": brokers,
        "cluster_id": "cluster-0",
        "controller_id": 0,
        "topics": topics,
        "cluster_authorized_operations": -(2**31),  # v8-v10
    }


def _fetch_body() -> dict[str, Any]:
    records = os.urandom(1024)
    return {
        "throttle_time_ms": 0,
        "error_code": 0,
        "session_id": 0,
        "responses": [
            {
                "topic": f"topic-{t}",
                "topic_id": os.urandom(16),
                "partitions": [
                    {
                        "partition_index": p,
                        "error_code": 0,
                        "high_watermark": 1000 + p,
                        "last_stable_offset": 1000 + p,
                        "log_start_offset": 0,
                        "aborted_transactions": [],
                        "preferred_read_replica": -1,
                        "records": records,
                    }
                    for p in range(10)
                ],
            }
            for t in range(5)
        ],
    }


def _produce_body() -> dict[str, Any]:
    return {
        "throttle_time_ms": 0,
        "responses": [
            {
                "name": f"topic-{t}",
                "topic_id": os.urandom(16),
                "partition_responses": [
                    {
                        "index": p,
                        "error_code": 0,
                        "base_offset": 1000 * p,
                        "log_append_time_ms": -1,
                        "log_start_offset": 0,
                        "record_errors": [],
                        "error_message": None,
                    }
                    for p in range(10)
                ],
            }
            for t in range(5)
        ],
    }


#: case name -> (api key, version, kafka-python's message class, body)
CASES: dict[str, tuple[int, int, Any, dict[str, Any]]] = {
    **{f"metadata-v{v}": (3, v, MetadataResponse, _metadata_body()) for v in METADATA_VERSIONS},
    **{f"fetch-v{v}": (1, v, FetchResponse, _fetch_body()) for v in FETCH_VERSIONS},
    **{f"produce-v{v}": (0, v, ProduceResponse, _produce_body()) for v in PRODUCE_VERSIONS},
}
FRAMES = {name: kproto.encode_response(key, v, 42, body) for name, (key, v, _, body) in CASES.items()}


def kafka_decode(cls: Any, version: int, frame: bytes) -> Any:
    """kafka-python's decode of a whole response frame (size and header included)."""
    return cls[version].decode(frame, header=True, framed=True)


def kafka_encode(message: Any) -> bytes:
    """kafka-python's encode of a whole response frame (size and header included)."""
    return bytes(message.encode(header=True, framed=True))


def _calls(name: str) -> dict[str, Callable[[], Any]]:
    """The four measured calls of a case, each checked once first."""
    key, version, cls, body = CASES[name]
    frame = FRAMES[name]
    message = kafka_decode(cls, version, frame)
    message.with_header(correlation_id=42)
    if kafka_encode(message) != frame:
        raise AssertionError(f"{name}: kafka-python's frame differs from kproto's")
    if kproto.encode_response(key, version, 42, kproto.decode_response(key, version, frame).body) != frame:
        raise AssertionError(f"{name}: kproto does not re-encode what it decoded")
    return {
        "decode kproto": lambda: kproto.decode_response(key, version, frame),
        "decode kafka-python": lambda: kafka_decode(cls, version, frame),
        "encode kproto": lambda: kproto.encode_response(key, version, 42, body),
        "encode kafka-python": lambda: kafka_encode(message),
    }


def _batch(call: Callable[[], Any], budget_s: float) -> int:
    """Calls per sample: about ``budget_s`` of them, at least one."""
    start = time.perf_counter()
    call()
    return max(1, int(budget_s / max(time.perf_counter() - start, 1e-7)))


def measure(rounds: int, budget_s: float) -> dict[str, dict[str, list[float]]]:
    """case -> call -> samples (µs per call), the calls of every case interleaved in each round."""
    calls = {name: _calls(name) for name in CASES}
    sizes = {(n, c): _batch(f, budget_s) for n, fs in calls.items() for c, f in fs.items()}
    samples: dict[str, dict[str, list[float]]] = {n: {c: [] for c in fs} for n, fs in calls.items()}
    for _ in range(rounds):
        for name, fs in calls.items():
            for what, call in fs.items():
                k = sizes[name, what]
                start = time.perf_counter()
                for _ in range(k):
                    call()
                samples[name][what].append((time.perf_counter() - start) / k * 1e6)
    return samples


def _fmt(us: float) -> str:
    return f"{us:.1f}" if us < 100 else f"{us:.0f}"


def timing(samples: list[float]) -> str:
    """A table cell: min / median µs of ``samples``."""
    return f"{_fmt(min(samples))} / {_fmt(statistics.median(samples))}"


def speedup(ours: list[float], theirs: list[float]) -> str:
    """A table cell: how many times faster ``ours`` is, by the minimum and by the median."""
    return f"{min(theirs) / min(ours):.2f}x / {statistics.median(theirs) / statistics.median(ours):.2f}x"


def table(samples: dict[str, dict[str, list[float]]]) -> list[str]:
    """The Markdown table: min / median µs per call and the speed-ups (min and median)."""
    lines = [
        "| message | version | decode kproto | decode kafka-python | decode speed-up (min / median)"
        " | encode kproto | encode kafka-python | encode speed-up (min / median) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, calls in samples.items():
        message, version = name.rsplit("-v", 1)
        cells = [message.capitalize(), version]
        for direction in ("decode", "encode"):
            ours, theirs = calls[f"{direction} kproto"], calls[f"{direction} kafka-python"]
            cells += [timing(ours), timing(theirs), speedup(ours, theirs)]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _walk(value: Any, counts: Counter[tuple[str, int]]) -> None:
    """Count what a decoded tree is made of: structs by field count, int lists and blobs by length."""
    if isinstance(value, dict):
        if isinstance(value, Container) and not isinstance(value, ReadOnlyContainer):
            counts["struct", len(value)] += 1
        for item in value.values():
            _walk(item, counts)
    elif isinstance(value, list):
        if value and all(isinstance(x, int) for x in value):
            counts["ints", len(value)] += 1
        else:
            counts["list", 0] += 1
            for item in value:
                _walk(item, counts)
    elif isinstance(value, (bytes, str)):
        counts["blob", len(value)] += 1


def _maker(counts: Counter[tuple[str, int]], data: bytes) -> Callable[[], None]:
    """A function making, one statement each, the objects ``counts`` lists, the cheapest way
    Python offers: Containers by keywords, one ``unpack_from`` per int list, one slice per blob."""
    body: list[str] = []
    env: dict[str, Any] = {"Container": Container, "data": data}
    for (kind, size), n in sorted(counts.items()):
        if kind == "struct":
            stmt = "Container(" + ", ".join(f"f{i}=0" for i in range(size)) + ")"
        elif kind == "ints":
            env[f"ints{size}"] = struct.Struct(f">{size}i").unpack_from
            stmt = f"list(ints{size}(data, 0))"
        elif kind == "blob":
            stmt = f"data[0:{size}]"
        else:
            stmt = "[]"
        body += [stmt] * n
    exec("def make():\n    " + "\n    ".join(body or ["pass"]), env)
    return env["make"]


def floor(names: list[str], rounds: int, budget_s: float) -> list[str]:
    """The least any decoder into kproto's values can cost: making the objects alone.

    Each case's decoded tree is counted (Containers by field count, lists of
    ints, byte and text fields by length) and a function makes that many
    objects the cheapest way, reading nothing, keeping nothing; kafka-python's
    decode time over that function's (in the same interleaved rounds) bounds
    kproto's decode speed-up from above."""
    lines = [
        "| case | structs | int lists | blobs | objects alone (µs, min / median)"
        " | kafka-python decode (µs, min / median) | speed-up at most (min / median) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name in names:
        key, version, _, _ = CASES[name]
        counts: Counter[tuple[str, int]] = Counter()
        _walk(kproto.decode_response(key, version, FRAMES[name]).body, counts)
        calls = {"floor": _maker(counts, FRAMES[name]), "theirs": _calls(name)["decode kafka-python"]}
        sizes = {what: _batch(call, budget_s) for what, call in calls.items()}
        samples: dict[str, list[float]] = {what: [] for what in calls}
        for _ in range(rounds):
            for what, call in calls.items():
                start = time.perf_counter()
                for _ in range(sizes[what]):
                    call()
                samples[what].append((time.perf_counter() - start) / sizes[what] * 1e6)
        ours, theirs = samples["floor"], samples["theirs"]
        total = {
            k: sum(n for (kind, _), n in counts.items() if kind == k) for k in ("struct", "ints", "blob")
        }
        lines.append(
            f"| {name} | {total['struct']} | {total['ints']} | {total['blob']}"
            f" | {timing(ours)} | {timing(theirs)} | {speedup(ours, theirs)} |"
        )
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="7 rounds of 20 ms samples instead of 25 of 40 ms"
    )
    parser.add_argument("--out", type=Path, help="also write the table to this Markdown file")
    parser.add_argument(
        "--floor", action="store_true", help="also bound the decode speed-up by the cost of the objects alone"
    )
    parser.add_argument(
        "--freeze", action="store_true", help="gc.freeze() what the imports and the messages made, first"
    )
    args = parser.parse_args(argv)
    if args.freeze:
        gc.freeze()
    rounds, budget = (7, 0.02) if args.quick else (25, 0.04)
    load_before = os.getloadavg()
    samples = measure(rounds, budget)
    load_after = os.getloadavg()
    lines = table(samples)
    lines.append("")
    lines.append(
        f"{rounds} interleaved rounds{', imports frozen' if args.freeze else ''};"
        " load average (1, 5, 15 min) "
        f"{', '.join(f'{x:.2f}' for x in load_before)} before, "
        f"{', '.join(f'{x:.2f}' for x in load_after)} after."
    )
    if args.floor:
        lines += ["", *floor(["metadata-v12", "fetch-v16", "metadata-v1", "fetch-v11"], rounds, budget)]
    text = "\n".join(lines)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
