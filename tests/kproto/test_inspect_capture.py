"""``python -m kproto pcap`` on a real capture: tcpdump on loopback while librdkafka talks to hmb.

Needs root (to capture) and the tcpdump binary (``scripts/test`` installs it
when it runs as root); skipped with the reason otherwise.  The capture is
taken the way a user would take it, ``tcpdump -i lo -w FILE 'tcp port P'``,
and every request and response in it must decode and pair up.
"""

from __future__ import annotations

import os
import queue
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from broker_process import BrokerProcess
from inspect_support import summary

from kproto.inspect.cli import main

pytestmark = pytest.mark.interop

confluent_kafka = pytest.importorskip("confluent_kafka")

TCPDUMP = shutil.which("tcpdump")
VALUES = [b"value-%d" % i for i in range(5)]


def _inspect(path: Path, port: int) -> list[dict[str, Any]]:
    import io
    import json

    out = io.StringIO()
    main(["pcap", str(path), "--port", str(port), "--records"], out=out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


class Tcpdump:
    """``tcpdump -i lo`` writing every packet as it comes (-U), started before any client connects."""

    def __init__(self, path: Path, port: int) -> None:
        args = [str(TCPDUMP), "-i", "lo", "-n", "-U", "-Z", "root", "-w", str(path), f"tcp port {port}"]
        self.proc = subprocess.Popen(args, stderr=subprocess.PIPE, text=True)
        lines: queue.Queue[str] = queue.Queue()
        assert self.proc.stderr is not None
        threading.Thread(
            target=lambda: [lines.put(line) for line in self.proc.stderr or ()], daemon=True
        ).start()
        try:
            first = lines.get(timeout=20)
        except queue.Empty:
            first = ""
        if "listening on" not in first:
            self.stop()
            pytest.skip(f"tcpdump cannot capture on lo here: {first.strip() or 'no output'}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)


def _produce_and_consume(bootstrap: str) -> None:
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "log_level": 3})
    for value in VALUES:
        producer.produce("captured", value, b"key")
    assert producer.flush(30) == 0
    consumer = confluent_kafka.Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "inspect", "log_level": 3, "enable.auto.commit": False}
    )
    try:
        consumer.assign([confluent_kafka.TopicPartition("captured", 0, 0)])
        got: list[bytes] = []
        deadline = time.monotonic() + 30
        while len(got) < len(VALUES) and time.monotonic() < deadline:
            for message in consumer.consume(10, 0.2):
                assert not message.error(), message.error()
                got.append(message.value())
        assert got == VALUES
    finally:
        consumer.close()


@pytest.mark.skipif(
    TCPDUMP is None, reason="tcpdump is not installed (scripts/test installs it when run as root)"
)
@pytest.mark.skipif(os.geteuid() != 0, reason="capturing on loopback needs root")
def test_a_real_capture_of_librdkafka_and_hmb_decodes_and_pairs(tmp_path: Path) -> None:
    capture = tmp_path / "kafka.pcap"
    with BrokerProcess(tmp_path / "data") as broker:
        tcpdump = Tcpdump(capture, broker.port)
        try:
            _produce_and_consume(broker.bootstrap)
            # tcpdump writes each packet as it reads it: wait until the last answer is in the file
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                events = _inspect(capture, broker.port)
                if any(
                    e.get("api") == "Fetch" and e["direction"] == "response" and _fetched(e) for e in events
                ):
                    break
                time.sleep(0.1)
        finally:
            tcpdump.stop()
    events = _inspect(capture, broker.port)
    assert [e for e in events if "error" in e] == []
    kinds = summary(events)
    apis = {(direction, api) for _, direction, api, _, _ in kinds}
    for api in ("ApiVersions", "Metadata", "Produce", "Fetch"):
        assert ("request", api) in apis and ("response", api) in apis, api
    # every response answers a request of the same connection, api and correlation id
    requests = {(c, api, cid) for c, d, api, cid, _ in kinds if d == "request"}
    assert all((c, api, cid) in requests for c, d, api, cid, _ in kinds if d == "response")
    api_versions = next(e for e in events if e.get("api") == "ApiVersions" and e["direction"] == "request")
    assert (
        api_versions["version"] >= 3
        and api_versions["body"]["client_software_name"] == "confluent-kafka-python"
    )
    produced = [
        bytes.fromhex(record["value"])
        for e in events
        if e.get("api") == "Produce" and e["direction"] == "request"
        for topic in e["body"]["topic_data"]
        for partition in topic["partition_data"]
        for entry in partition["records"]["entries"]
        for record in entry["records"]
    ]
    assert produced == VALUES
    fetched = [
        v for e in events if e.get("api") == "Fetch" and e["direction"] == "response" for v in _fetched(e)
    ]
    assert fetched == VALUES


def _fetched(event: dict[str, Any]) -> list[bytes]:
    return [
        bytes.fromhex(record["value"])
        for topic in event["body"]["responses"]
        for partition in topic["partitions"]
        if partition["records"]
        for entry in partition["records"]["entries"]
        for record in entry.get("records", [])
    ]
