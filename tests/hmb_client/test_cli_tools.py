"""The ``hmb`` client tools (topics, produce, consume, perf) against the real broker.

Most commands run as real subprocesses (``python -m hmb_cmd``), so
exit codes, stdin/stdout bytes and stderr messages are exactly what a user
gets; quick ones run through ``main(argv)``.
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from broker_process import ROOT, BrokerProcess, free_port

from hmb_client.progress import Progress
from hmb_client.structs import ConsumerRecord
from hmb_client.tools.console import RecordFormatter
from hmb_client.tools.perf import latency_summary, percentile, sample_every
from hmb_cmd import build_parser, main

SUBCOMMANDS = [
    [],
    ["topics"],
    ["topics", "create"],
    ["topics", "list"],
    ["topics", "describe"],
    ["produce"],
    ["consume"],
    ["perf"],
    ["perf", "produce"],
    ["perf", "consume"],
]


def hmb(*args: str, stdin: bytes = b"", timeout: float = 120) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "hmb_cmd", *args],
        input=stdin,
        capture_output=True,
        timeout=timeout,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def ok(result: subprocess.CompletedProcess[bytes]) -> subprocess.CompletedProcess[bytes]:
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    assert b"Traceback" not in result.stderr
    return result


def subparser(path: list[str]) -> argparse.ArgumentParser:
    parser = build_parser()
    for name in path:
        action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = action.choices[name]
    return parser


# ------------------------------------------------------------------ help


@pytest.mark.parametrize("path", SUBCOMMANDS, ids=lambda p: " ".join(p) or "hmb")
def test_help_exits_0_and_explains_every_option(path: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([*path, "--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    assert text.startswith("usage: hmb")
    for action in subparser(path)._actions:
        assert action.help, f"{action.option_strings or action.dest} of hmb {' '.join(path)} has no help"
        for option in action.option_strings:
            assert option in text


def test_serve_is_still_the_brokers(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["serve", "--help"])
    assert exit_info.value.code == 0
    assert "--data-dir" in capsys.readouterr().out


def test_no_command_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "topics" in capsys.readouterr().out


# ------------------------------------------------------------------ topics


def test_topics_create_list_describe(make_broker: Any, capsys: pytest.CaptureFixture[str]) -> None:
    broker = make_broker("num.partitions=2")
    bs = ["--bootstrap-server", broker.bootstrap]
    assert main(["topics", "create", "alpha", *bs]) == 0
    assert "Created topic alpha with 2 partitions" in capsys.readouterr().out
    assert main(["topics", "create", "alpha", *bs]) == 1
    assert "already exists" in capsys.readouterr().err
    assert main(["topics", "create", "alpha", "--if-not-exists", *bs]) == 0
    # the broker offers CreateTopics: the count is honoured (0.8 Metadata creation could not)
    assert main(["topics", "create", "beta", "--partitions", "4", *bs]) == 0
    assert "Created topic beta with 4 partitions" in capsys.readouterr().out

    assert main(["topics", "list", *bs]) == 0
    assert capsys.readouterr().out.split() == ["alpha", "beta"]
    assert main(["topics", "list", "--include-internal", *bs]) == 0
    assert capsys.readouterr().out.split() == ["__consumer_offsets", "alpha", "beta"]

    ok(hmb("produce", "alpha", *bs, stdin=b"x\ny\nz\n"))  # null keys: one partition (sticky)
    assert main(["topics", "describe", "alpha", *bs]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == [
        "TOPIC",
        "PARTITION",
        "LEADER",
        "EARLIEST",
        "LATEST",
        "MESSAGES",
        "REPLICAS",
        "ISR",
        "OFFLINE",
    ]
    rows = [line.split() for line in lines[1:]]
    assert [r[:3] for r in rows] == [["alpha", "0", "0"], ["alpha", "1", "0"]]
    assert [r[6:] for r in rows] == [["0", "0", "-"], ["0", "0", "-"]]  # alone: one replica, in sync
    assert sorted(int(r[5]) for r in rows) == [0, 3]
    assert all(int(r[4]) - int(r[3]) == int(r[5]) for r in rows)

    assert main(["topics", "describe", *bs]) == 0
    assert {line.split()[0] for line in capsys.readouterr().out.splitlines()[1:]} == {"alpha", "beta"}
    assert main(["topics", "describe", "missing", *bs]) == 1
    assert "does not exist" in capsys.readouterr().err


# ------------------------------------------------------------------ produce / consume

LINES = [
    b"k1:v1",
    b"k2:value with spaces\ttab",
    b":empty key",
    b"k4:",
    "k5:h\u00e9llo \u2603".encode(),
    b"k6:a:b:c",
    b"k7:\xff\xfebinary",
]


def test_produce_then_consume_in_every_format(broker: BrokerProcess) -> None:
    bs = ["--bootstrap-server", broker.bootstrap]
    result = ok(
        hmb(
            "produce",
            "lines",
            *bs,
            "--property",
            "parse.key=true",
            "--property",
            "key.separator=:",
            stdin=b"\n".join(LINES) + b"\n",
        )
    )
    assert b"7 record(s) sent to lines" in result.stderr
    pairs = [line.split(b":", 1) for line in LINES]
    common = ["consume", "lines", *bs, "--from-beginning", "--max-messages", str(len(LINES))]

    values = ok(hmb(*common)).stdout
    assert values == b"".join(v + b"\n" for _, v in pairs)

    kv = ok(hmb(*common, "--format", "key-value", "--property", "key.separator=:")).stdout
    assert kv == b"\n".join(LINES) + b"\n"
    kv_tab = ok(hmb(*common, "--property", "print.key=true")).stdout
    assert kv_tab == b"".join(k + b"\t" + v + b"\n" for k, v in pairs)

    objects = [json.loads(line) for line in ok(hmb(*common, "--format", "json")).stdout.splitlines()]
    assert [(o["topic"], o["partition"], o["offset"]) for o in objects] == [
        ("lines", 0, i) for i in range(len(LINES))
    ]
    assert [(o["key"], o["value"]) for o in objects] == [
        (k.decode(errors="replace"), v.decode(errors="replace")) for k, v in pairs
    ]
    assert all("timestamp" in o for o in objects)
    raw = [json.loads(line) for line in ok(hmb(*common, "--format", "json", "--binary")).stdout.splitlines()]
    assert [(base64.b64decode(o["key"]), base64.b64decode(o["value"])) for o in raw] == [
        (k, v) for k, v in pairs
    ]


def test_produce_from_file_keeps_bytes(broker: BrokerProcess, tmp_path: Path) -> None:
    data = b"first\n\nthird has no newline at the end\r"
    path = tmp_path / "input.txt"
    path.write_bytes(data)
    bs = ["--bootstrap-server", broker.bootstrap]
    ok(hmb("produce", "file", "--file", str(path), *bs, "--compression-type", "gzip", "--acks", "all"))
    out = ok(hmb("consume", "file", *bs, "--offset", "0", "--max-messages", "3")).stdout
    assert out == b"first\n\nthird has no newline at the end\r\n"


def test_produce_failure_exits_1(make_broker: Any) -> None:
    broker = make_broker("message.max.bytes=200")
    # One record, as a batch is accepted or refused whole.
    result = hmb("produce", "small", "--bootstrap-server", broker.bootstrap, stdin=b"x" * 1000 + b"\n")
    assert result.returncode == 1
    assert b"1 of 1 record(s) failed" in result.stderr
    assert b"MESSAGE_TOO_LARGE" in result.stderr
    assert b"Traceback" not in result.stderr


def test_produce_line_without_separator_is_an_error(broker: BrokerProcess) -> None:
    result = hmb(
        "produce",
        "strict",
        "--bootstrap-server",
        broker.bootstrap,
        "--property",
        "parse.key=true",
        stdin=b"a\tb\nno separator\n",
    )
    assert result.returncode == 1
    assert b"line 2 has no key separator" in result.stderr


def test_unknown_property_is_a_usage_error(broker: BrokerProcess) -> None:
    result = hmb("produce", "t", "--bootstrap-server", broker.bootstrap, "--property", "parse.keys=true")
    assert result.returncode == 2
    assert b"unknown produce property 'parse.keys'" in result.stderr


def test_consume_with_group_resumes_from_committed(broker: BrokerProcess) -> None:
    bs = ["--bootstrap-server", broker.bootstrap]
    ok(hmb("produce", "jobs", *bs, stdin=b"".join(b"job-%d\n" % i for i in range(10))))
    first = ok(hmb("consume", "jobs", *bs, "--group", "workers", "--from-beginning", "--max-messages", "4"))
    assert first.stdout == b"job-0\njob-1\njob-2\njob-3\n"
    second = ok(hmb("consume", "jobs", *bs, "--group", "workers", "--max-messages", "4"))
    assert second.stdout == b"job-4\njob-5\njob-6\njob-7\n"
    third = ok(hmb("consume", "jobs", *bs, "--group", "workers", "--timeout-ms", "1000"))
    assert third.stdout == b"job-8\njob-9\n"
    assert b"Processed a total of 2 messages" in third.stderr
    # A new group with nothing committed starts at the end, as Kafka's console consumer does.
    assert ok(hmb("consume", "jobs", *bs, "--group", "late", "--timeout-ms", "500")).stdout == b""


def test_consume_offset_and_partition(make_broker: Any) -> None:
    broker = make_broker("num.partitions=2")
    bs = ["--bootstrap-server", broker.bootstrap]
    # parse.key with keys chosen so both partitions get records (murmur2, as Kafka's clients)
    ok(
        hmb(
            "produce",
            "parts",
            *bs,
            "--property",
            "parse.key=true",
            stdin=b"".join(b"key%d\tv%d\n" % (i, i) for i in range(20)),
        )
    )
    both = ok(hmb("consume", "parts", *bs, "--from-beginning", "--max-messages", "20", "--format", "json"))
    records = [json.loads(line) for line in both.stdout.splitlines()]
    assert sorted(r["value"] for r in records) == sorted(f"v{i}" for i in range(20))
    in_p1 = [r for r in records if r["partition"] == 1]
    assert in_p1 and len(in_p1) < 20
    tail = ok(
        hmb(
            "consume",
            "parts",
            *bs,
            "--partition",
            "1",
            "--offset",
            "1",
            "--timeout-ms",
            "1000",
            "--property",
            "print.offset=true",
            "--property",
            "print.partition=true",
        )
    )
    assert tail.stdout == b"".join(
        b"Partition:1\tOffset:%d\t%s\n" % (r["offset"], r["value"].encode()) for r in in_p1[1:]
    )
    missing = hmb("consume", "parts", *bs, "--partition", "7", "--timeout-ms", "100")
    assert missing.returncode == 1 and b"no partition 7" in missing.stderr


# ------------------------------------------------------------------ perf


def test_perf_produce_json_then_perf_consume_json(broker: BrokerProcess) -> None:
    bs = ["--bootstrap-server", broker.bootstrap]
    result = ok(
        hmb(
            "perf",
            "produce",
            "--topic",
            "bench",
            "--num-records",
            "5000",
            "--record-size",
            "200",
            "--batch-size",
            "8192",
            "--linger-ms",
            "2",
            "--json",
            *bs,
        )
    )
    report = json.loads(result.stdout)
    assert (report["records"], report["records_sent"], report["records_failed"]) == (5000, 5000, 0)
    assert report["record_size"] == 200
    assert report["msgs_per_s"] > 0 and report["elapsed_s"] > 0
    assert report["mb_per_s"] == pytest.approx(report["msgs_per_s"] * 200 / 1e6, rel=0.01)
    lat = report["latency_ms"]
    assert lat["samples"] == 5000 // report["latency_sample_every"]
    assert 0 < lat["p50"] <= lat["p95"] <= lat["p99"] <= lat["max"] < report["elapsed_s"] * 1000 + 1
    assert sum(iv["records"] for iv in report["intervals"]) == 5000

    consumed = json.loads(
        ok(hmb("perf", "consume", "--topic", "bench", "--messages", "5000", "--json", *bs)).stdout
    )
    assert (consumed["messages"], consumed["bytes"]) == (5000, 5000 * 200)
    assert consumed["msgs_per_s"] > 0
    assert sum(iv["records"] for iv in consumed["intervals"]) == 5000


def test_perf_produce_duration_and_target_rate(broker: BrokerProcess) -> None:
    result = ok(
        hmb(
            "perf",
            "produce",
            "--topic",
            "paced",
            "--duration",
            "1.5",
            "--throughput",
            "400",
            "--reporting-interval-ms",
            "500",
            "--bootstrap-server",
            broker.bootstrap,
        )
    )
    lines = result.stdout.decode().splitlines()
    summary = lines[-1]
    sent = int(summary.split()[0])
    assert 0 < sent <= 400 * 1.5 + 2  # the throttle never lets it run ahead of the target
    assert "p50" in summary and "p99" in summary and "MB/s" in summary
    assert len(lines) >= 3  # interval lines before the summary
    assert all("msg/s" in line and "latency avg" in line for line in lines[:-1])


def test_perf_consume_reports_a_shortfall(broker: BrokerProcess) -> None:
    bs = ["--bootstrap-server", broker.bootstrap]
    ok(hmb("produce", "few", *bs, stdin=b"1\n2\n3\n"))
    result = hmb("perf", "consume", "--topic", "few", "--messages", "10", "--timeout-ms", "500", *bs)
    assert result.returncode == 1
    assert b"only 3 of 10 records read" in result.stderr


# ------------------------------------------------------------------ errors


@pytest.mark.parametrize(
    "args",
    [
        ["topics", "list"],
        ["topics", "create", "t"],
        ["produce", "t"],
        ["consume", "t"],
        ["perf", "produce", "--topic", "t", "--num-records", "10"],
        ["perf", "consume", "--topic", "t", "--messages", "10"],
    ],
    ids=lambda a: " ".join(a[:2]),
)
def test_unreachable_bootstrap_is_one_line_and_fast(args: list[str]) -> None:
    server = f"127.0.0.1:{free_port()}"
    started = time.monotonic()
    result = hmb(*args, "--bootstrap-server", server, "--request-timeout-ms", "1000", stdin=b"x\n")
    elapsed = time.monotonic() - started
    assert result.returncode == 1
    message = result.stderr.decode().strip()
    assert len(message.splitlines()) == 1, message
    assert server in message and "hmb serve" in message and "--bootstrap-server" in message
    assert elapsed < 10  # 1 s to give up + interpreter start


def test_bad_bootstrap_address_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["topics", "list", "--bootstrap-server", "host:notaport"]) == 1
    assert "bad bootstrap server" in capsys.readouterr().err


# ------------------------------------------------------------------ pieces


def test_record_formatter() -> None:
    record = ConsumerRecord("t", 2, 41, 1700000000000, b"k", b"v\xff")
    null = ConsumerRecord("t", 0, 7, None, None, None)
    fmt = RecordFormatter(
        "value",
        {
            "print.timestamp": "true",
            "print.offset": "true",
            "print.key": "true",
            "key.separator": "|",
            "line.separator": "\\r\\n",
        },
        binary=False,
    )
    assert fmt(record) == b"CreateTime:1700000000000|Offset:41|k|v\xff\r\n"
    assert fmt(null) == b"NO_TIMESTAMP|Offset:7|null|null\r\n"
    assert RecordFormatter("value", {"null.literal": "-"}, binary=False)(null) == b"-\n"
    assert json.loads(RecordFormatter("json", {}, binary=False)(record)) == {
        "topic": "t",
        "partition": 2,
        "offset": 41,
        "timestamp": 1700000000000,
        "key": "k",
        "value": "v\ufffd",
    }
    assert json.loads(RecordFormatter("json", {}, binary=True)(null))["value"] is None


def test_percentiles_and_sampling() -> None:
    values = list(range(1, 101))
    assert [percentile(values, q) for q in (50, 95, 99, 100)] == [50, 95, 99, 100]
    assert percentile([], 50) == 0.0
    summary = latency_summary([3.0, 1.0, 2.0])
    assert (summary["samples"], summary["avg"], summary["p50"], summary["max"]) == (3, 2.0, 2.0, 3.0)
    assert sample_every(100) == 1 and sample_every(1_000_000) == 32 and sample_every(None) == 32


def test_progress_draws_only_on_a_terminal() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    quiet = io.StringIO()
    p = Progress(100, unit="records", stream=quiet)
    p.update(50, force=True)
    p.println("a line")
    p.close()
    assert quiet.getvalue() == "a line\n"

    tty = Tty()
    p = Progress(100, unit="records", stream=tty)
    p.update(50, "9 msg/s", force=True)
    assert "[" in tty.getvalue() and "50.0%" in tty.getvalue() and "9 msg/s" in tty.getvalue()
    p.println("kept")
    p.close()
    assert "kept\n" in tty.getvalue()
    assert tty.getvalue().endswith("\r")  # the bar is erased at the end
