"""``hmb topics describe --control``: the log cleaner's state of each compacted partition,
read from hmb's control endpoint (the Kafka protocol has no field for it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from broker_process import BrokerProcess, free_port

from hmb_client import Producer
from hmb_client.tools.control import control_call
from hmb_cmd import main


def test_describe_shows_dirty_ratio_last_clean_and_bytes_cleaned(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    control = f"127.0.0.1:{free_port()}"
    with BrokerProcess(
        tmp_path / "data", f"control.listener={control}", "log.cleaner.enable=false"
    ) as broker:
        bs = ["--bootstrap-server", broker.bootstrap]
        config = ["--config", "cleanup.policy=compact", "--config", "segment.bytes=2048"]
        assert main(["topics", "create", "changelog", "--partitions", "1", *config, *bs]) == 0
        assert main(["topics", "create", "plain", *bs]) == 0
        producer = Producer(broker.bootstrap, linger_ms=0)
        try:
            for i in range(200):
                producer.send("changelog", b"v%d" % i + b"." * 50, key=b"k%d" % (i % 10)).get(10)
        finally:
            producer.close()
        capsys.readouterr()
        assert main(["topics", "describe", "changelog", "plain", "--control", control, *bs]) == 0
        before = _cleaner_rows(capsys.readouterr().out)
        assert before[0][:5] == ["changelog", "0", "1.00", "never", "0"]  # all dirty, never cleaned
        assert control_call(control, "clean_logs") == 1
        assert main(["topics", "describe", "changelog", "--control", control, *bs]) == 0
        [row] = _cleaner_rows(capsys.readouterr().out)
        assert row[0] == "changelog" and float(row[2]) < 0.5 and row[3] != "never"
        assert row[4] == "1" and int(row[5]) > 0
        assert main(["topics", "describe", "plain", "--control", control, *bs]) == 0
        assert "no compacted partition" in capsys.readouterr().out
        assert any("Log cleaner thread 0 cleaned log changelog-0" in line for line in broker.lines)


def _cleaner_rows(out: str) -> list[list[Any]]:
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("TOPIC") and "DIRTY_RATIO" in line)
    return [line.split() for line in lines[start + 1 :] if line.strip()]


def test_a_broker_without_a_control_endpoint_is_reported(tmp_path: Path) -> None:
    from hmb_client.tools.common import CliError

    with pytest.raises(CliError, match="cannot reach the control endpoint"):
        control_call(f"127.0.0.1:{free_port()}", "cleaner", timeout_s=1)
