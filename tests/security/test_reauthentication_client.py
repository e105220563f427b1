"""KIP-368 end to end: hmb_client re-authenticates before the broker's session ends,
so a producer on a broker with ``connections.max.reauth.ms`` keeps working."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from threaded_broker import ThreadedBroker

from hmb_client import Producer

JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-pw";'


def test_producer_outlives_several_session_lifetimes(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("INFO", logger="hmb.api.sasl")
    lines = (
        "listeners=SASL_PLAINTEXT://127.0.0.1:0",
        f"listener.name.sasl_plaintext.plain.sasl.jaas.config={JAAS}",
        "connections.max.reauth.ms=1000",
    )
    with ThreadedBroker(tmp_path / "data", *lines) as broker:
        producer = Producer(
            broker.address("SASL_PLAINTEXT"),
            security_protocol="SASL_PLAINTEXT",
            sasl_mechanism="PLAIN",
            sasl_plain_username="alice",
            sasl_plain_password="alice-pw",
        )
        try:
            sent = 0
            deadline = time.monotonic() + 20
            while caplog.text.count("re-authenticated as User:alice") < 2:
                assert time.monotonic() < deadline, "the client never re-authenticated"
                producer.send("reauth", b"v%d" % sent).get(timeout=10)  # fails if the broker closed on expiry
                sent += 1
        finally:
            producer.close()
    assert "expired" not in caplog.text  # no connection was closed for an expired session
