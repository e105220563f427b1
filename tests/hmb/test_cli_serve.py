"""``hmb serve`` as a user runs it: a Kafka server.properties, Kafka's file
layout on disk, a clean stop on SIGTERM, and clear errors for bad settings."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from broker_process import ROOT, free_port
from wire import WireClient, metadata_body, produce_body

from hmb.properties import PROPERTIES
from kproto import ApiKey
from kproto.records import build_message_set


def _hmb(*args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hmb_cmd", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_help_explains_the_options() -> None:
    out = _hmb("serve", "--help")
    assert out.returncode == 0
    for word in (
        "--config",
        "--listen",
        "--data-dir",
        "--override",
        "server.properties",
        "log.retention.hours",
    ):
        assert word in out.stdout
    # the settings list is the property table's: every setting, with its default
    for prop in PROPERTIES:
        assert f"  {prop.name} = " in out.stdout


def test_config_file_layout_and_clean_sigterm(tmp_path: Path) -> None:
    port = free_port()
    data = tmp_path / "kafka-logs"
    props = tmp_path / "server.properties"
    props.write_text(
        "# a Kafka-style file\n"
        f"listeners=PLAINTEXT://127.0.0.1:{port}\n"
        f"log.dirs={data}\n"
        "num.partitions=3\n"
        "log.segment.bytes=4096\n"
        "some.kafka.setting=ignored\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "hmb", "serve", "--config", str(props)],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        lines = []
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            lines.append(line)
            if "listening on" in line:
                break
        start_line = lines[-1]
        assert (
            f"127.0.0.1:{port}" in start_line
            and str(data) in start_line
            and re.search(r"hmb \d+\.\d+", start_line)
        )
        assert any("some.kafka.setting" in line for line in lines), "unknown settings are reported"

        with WireClient(f"127.0.0.1:{port}") as c:
            md = c.request(3, 0, metadata_body("layout"))
            assert len(md.topics[0].partitions) == 3
            assert (md.brokers[0].host, md.brokers[0].port) == ("127.0.0.1", port)
            batch = build_message_set([(None, b"v" * 200)] * 10)
            for _ in range(5):  # 5 x ~2.3 KiB with 4 KiB segments: several segments
                resp = c.request(0, 0, produce_body("layout", 1, batch))
                assert resp.responses[0].partition_responses[0].error_code == 0

        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
        rest = proc.stderr.read()
        assert "shutting down" in rest and "closed cleanly" in rest
    finally:
        if proc.poll() is None:
            proc.kill()
    assert (data / ".kafka_cleanshutdown").exists()
    assert sorted(p.name for p in data.iterdir() if p.is_dir()) == [
        "__consumer_offsets-0",
        "layout-0",
        "layout-1",
        "layout-2",
        "topic-configs",  # __consumer_offsets is created compacted, as Kafka creates it
    ]
    logs = sorted(p.name for p in (data / "layout-1").glob("*.log"))
    assert len(logs) >= 2 and all(re.fullmatch(r"\d{20}\.log", n) for n in logs)
    assert logs[0] == "00000000000000000000.log"
    for log_file in (data / "layout-1").glob("*.log"):
        assert log_file.with_suffix(".index").exists()


def test_bad_settings_give_a_clear_error(tmp_path: Path) -> None:
    out = _hmb("serve", "--override", "num.partitions=many", "--data-dir", str(tmp_path))
    assert out.returncode == 2 and "num.partitions must be an integer" in out.stderr
    out = _hmb("serve", "--config", str(tmp_path / "missing.properties"))
    assert out.returncode == 2 and "cannot read the config file" in out.stderr


def test_port_in_use_is_reported(tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        out = _hmb("serve", "--listen", f"127.0.0.1:{port}", "--data-dir", str(tmp_path))
    assert out.returncode == 1 and "already in use" in out.stderr


def test_serve_imports_numpy_in_the_background_once_it_listens(tmp_path: Path) -> None:
    """No request writes an index entry here, the one thing that needs numpy: it is imported
    anyway, from a worker thread, so a first index entry under load does not stall the loop."""
    from bench.hmb_process import BrokerProcess

    with BrokerProcess(tmp_path / "data") as b:
        assert b.proc is not None
        maps = Path(f"/proc/{b.proc.pid}/maps")
        deadline = time.monotonic() + 30
        while "_multiarray_umath" not in maps.read_text():
            assert time.monotonic() < deadline, "numpy was never imported"
            time.sleep(0.05)  # polling the process's maps (a bounded wait on a condition)
        with WireClient(b.bootstrap) as c:  # and it serves meanwhile
            assert c.request(ApiKey.API_VERSIONS, 0, {}).error_code == 0
