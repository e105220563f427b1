"""The control endpoint over TCP, for a broker in another process (``hmb serve``)."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from broker_process import BrokerProcess, free_port
from wire import WireClient, metadata_body

from kproto import ApiKey, ErrorCode


class ControlClient:
    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.file = self.sock.makefile("rwb")

    def call(self, op: str, **args: Any) -> dict[str, Any]:
        self.file.write(json.dumps({"op": op, "args": args}).encode() + b"\n")
        self.file.flush()
        reply: dict[str, Any] = json.loads(self.file.readline())
        return reply

    def raw(self, line: bytes) -> dict[str, Any]:
        self.file.write(line + b"\n")
        self.file.flush()
        reply: dict[str, Any] = json.loads(self.file.readline())
        return reply


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[BrokerProcess, ControlClient]]:
    port = free_port()
    with BrokerProcess(tmp_path / "data", f"control.listener=127.0.0.1:{port}") as broker:
        broker.wait_for_log("control endpoint")
        yield broker, ControlClient(port)


def test_off_by_default(tmp_path: Path) -> None:
    with BrokerProcess(tmp_path / "data") as broker:
        assert "control endpoint" not in broker.log_text()


def test_faults_inspection_and_clock_over_the_wire(served: tuple[BrokerProcess, ControlClient]) -> None:
    broker, control = served
    assert control.call("create_topic", name="w", partitions=2) == {"ok": True, "result": None}
    fault = control.call("inject", api="METADATA", error="LEADER_NOT_AVAILABLE", topic="w")
    assert fault["ok"] and fault["result"]["error"] == ErrorCode.LEADER_NOT_AVAILABLE
    with WireClient(broker.bootstrap) as c:
        assert c.request(ApiKey.METADATA, 1, metadata_body("w")).topics[0].error_code == 5
        assert c.request(ApiKey.METADATA, 1, metadata_body("w")).topics[0].error_code == 0
    log = control.call("requests")["result"]
    assert [r["api_name"] for r in log[-2:]] == ["METADATA", "METADATA"]
    line = json.dumps({"topic": "w", "partition": 1, "key": "k", "value": "v"})
    seeded = control.call("seed", lines=[line])
    assert seeded["result"] == {"topics": 1, "records": 1, "commits": 0}
    records = control.call("records", topic="w", partition=1)["result"]
    assert [(r["key"], r["value"]) for r in records] == [("k", "v")]
    assert control.call("watermarks", topic="w", partition=1)["result"]["high_watermark"] == 1
    assert control.call("advance_clock", seconds=86400) == {"ok": True, "result": None}
    assert control.call("snapshot")["result"][0] == json.dumps({"topic": "w", "partitions": 2})


def test_bad_requests_get_a_clear_error_and_change_nothing(
    served: tuple[BrokerProcess, ControlClient],
) -> None:
    _, control = served
    assert "not JSON" in control.raw(b"{nope")["error"]
    assert "unknown op" in control.call("shutdown")["error"]
    assert "no error code" in control.call("inject", api="PRODUCE", error="NOPE")["error"]
    assert "no partition" in control.call("records", topic="missing", partition=0)["error"]
    assert control.call("inject", api="PRODUCE", wrong_argument=1)["ok"] is False
    assert control.call("topics")["result"] == {"__consumer_offsets": 1}  # still answering, nothing changed


JAAS = (
    "listener.name.sasl_plaintext.plain.sasl.jaas.config="
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    'user_admin="admin-secret" user_alice="alice-secret";'
)


def test_with_security_only_a_logged_in_super_user_is_answered(tmp_path: Path) -> None:
    port = free_port()
    settings = (
        f"control.listener=127.0.0.1:{port}",
        "listeners=PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
        JAAS,
        "super.users=User:admin",
        "connection.failed.authentication.delay.ms=0",
    )
    with BrokerProcess(tmp_path / "data", *settings) as broker:
        broker.wait_for_log("control endpoint")
        intruder = ControlClient(port)
        refused = intruder.call("create_topic", name="stolen", partitions=1)
        assert not refused["ok"] and "log in first" in refused["error"]
        for user, password in (("admin", "wrong"), ("nobody", "x"), ("alice", "alice-secret")):
            failed = intruder.call("login", user=user, password=password)
            assert not failed["ok"] and "super users only" in failed["error"]
        assert not intruder.call("topics")["ok"]  # still refused after the failed logins
        admin = ControlClient(port)
        assert admin.call("login", user="admin", password="admin-secret") == {"ok": True, "result": None}
        assert admin.call("topics")["ok"]
        assert "stolen" not in admin.call("topics")["result"]  # the refused request changed nothing
        broker.wait_for_log(r"failed login for 'alice'")


def test_version_caps_over_the_wire(served: tuple[BrokerProcess, ControlClient]) -> None:
    broker, control = served
    assert control.call("limit_versions", caps={"FETCH": 11, "0": 8}) == {
        "ok": True,
        "result": {"0": 8, "1": 11},
    }
    av3 = {"client_software_name": "t", "client_software_version": "1"}
    with WireClient(broker.bootstrap) as c:
        table = {k.api_key: k.max_version for k in c.request(ApiKey.API_VERSIONS, 3, av3).api_keys}
    assert (table[ApiKey.PRODUCE], table[ApiKey.FETCH]) == (8, 11)
    assert "no API key named" in control.call("limit_versions", caps={"NOPE": 1})["error"]
    assert control.call("limit_versions", caps={})["result"] == {}
