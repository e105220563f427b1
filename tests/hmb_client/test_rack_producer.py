"""The rAck producer against a real broker alone: every record ends in the log.

``Producer(acks="rack")`` sends with acks = -2 and its in-process monitor reads
the broker's ``__rack_receipts``.  Records are lost on the way by the control
API: a Produce request dropped with its connection before the broker reads it
(what a lossy network does to a request nobody waits for).

What can fail here: a record missing from the log after flush(), flush()
returning before resends are acknowledged, a resend that failed never
retried, receipts of another producer taken for ours, a rAck producer that
is not a Producer.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator

import pytest
from broker_process import InProcessBroker

from bench.hmb_process import free_port
from hmb_client import Producer
from hmb_client.producer.producer import Producer as PlainProducer
from hmb_client.rack.producer import RackProducer

FAST = {"rack_receipt_wait_ms": 2000, "rack_retry_interval_ms": 200, "linger_ms": 2}


@pytest.fixture
def broker() -> Iterator[InProcessBroker]:
    with InProcessBroker() as b:
        yield b


def _ids_in_log(broker: InProcessBroker, topic: str, partitions: int) -> list[str]:
    out = []
    for p in range(partitions):
        for r in broker.records(topic, p):
            out += [v.decode() for k, v in r["headers"] if k == "rack.id"]
    return out


def test_rack_producer_delivers_every_record_confirmed_by_receipts(broker: InProcessBroker) -> None:
    broker.create_topic("rack-all", 3)
    with Producer(bootstrap_servers=broker.bootstrap, acks="rack", **FAST) as p:
        assert isinstance(p, RackProducer) and isinstance(p, PlainProducer)
        assert p.config.acks == -2 and p.config.client_id.startswith("hmb-rack-")
        for i in range(3000):
            p.send("rack-all", b"value-%d" % i, key=None if i % 2 else b"k%d" % i)
        p.flush(timeout=60)
        stats = p.monitor.stats
    ids = _ids_in_log(broker, "rack-all", 3)
    assert sorted(ids, key=int) == [str(i) for i in range(3000)]  # each once: nothing lost, nothing resent
    assert (stats.backups, stats.confirmed, stats.resent) == (3000, 3000, 0)


def test_dropped_requests_are_resent_and_flush_waits_for_them(broker: InProcessBroker) -> None:
    broker.create_topic("rack-lossy", 2)
    with Producer(bootstrap_servers=broker.bootstrap, acks="rack", rack_backup_slots=200, **FAST) as p:
        for i in range(2000):
            if i == 300:
                broker.inject("Produce", count=3, drop=True)  # three requests and their connections lost
            p.send("rack-lossy", b"value-%d" % i)
        p.flush(timeout=60)
        stats = p.monitor.stats
    ids = _ids_in_log(broker, "rack-lossy", 2)
    assert set(ids) == {str(i) for i in range(2000)}  # every record, some perhaps twice
    assert stats.resent > 0 and stats.resent_acknowledged == stats.resent - stats.resend_failures
    assert stats.confirmed + stats.resent_acknowledged >= 2000


def test_a_failed_resend_is_retried_until_acknowledged(broker: InProcessBroker) -> None:
    broker.create_topic("rack-retry", 1)
    with Producer(bootstrap_servers=broker.bootstrap, acks="rack", **FAST) as p:
        broker.inject("Produce", count=1, drop=True)  # the rAck request: its records need resends
        for i in range(50):
            p.send("rack-retry", b"value-%d" % i)
        PlainProducer.flush(p, timeout=30)  # the rAck request is written (and dropped)
        broker.inject("Produce", count=1, drop=True)  # ... and so is the first resend
        p.flush(timeout=60)
        stats = p.monitor.stats
    assert set(_ids_in_log(broker, "rack-retry", 1)) == {str(i) for i in range(50)}
    assert stats.resend_failures >= 1 and stats.resent > stats.resend_failures


def test_two_rack_producers_read_only_their_own_receipts(broker: InProcessBroker) -> None:
    broker.create_topic("rack-two", 1)
    a = Producer(bootstrap_servers=broker.bootstrap, acks="rack", **FAST)
    b = Producer(bootstrap_servers=broker.bootstrap, acks="rack", **FAST)
    try:
        for i in range(500):
            a.send("rack-two", b"a%d" % i)
            b.send("rack-two", b"b%d" % i)
        a.flush(timeout=60)
        b.flush(timeout=60)
        # the same ids 0..499 from both: each monitor confirmed its own 500, no more
        assert a.monitor.stats.confirmed == b.monitor.stats.confirmed == 500
        assert a.monitor.stats.resent == b.monitor.stats.resent == 0
    finally:
        a.close()
        b.close()
    assert len(_ids_in_log(broker, "rack-two", 1)) == 1000


def test_bad_acks_values_are_refused_by_the_client() -> None:
    with pytest.raises(ValueError, match="'rack'"):
        Producer(bootstrap_servers="127.0.0.1:1", acks="sometimes")


def test_a_standalone_monitor_serves_producers_of_other_processes(broker: InProcessBroker) -> None:
    """``hmb rack-monitor`` as a process; two producers use it, one loses requests."""
    broker.create_topic("rack-remote", 2)
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "hmb_cmd",
            "rack-monitor",
            "--bootstrap-server",
            broker.bootstrap,
            "--port",
            str(port),
            "--retry-interval-ms",
            "200",
            "--receipt-wait-ms",
            "2000",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert "listening on" in proc.stdout.readline()  # ready: the line comes after the bind
        settings = {"rack_monitor": f"127.0.0.1:{port}", "linger_ms": 2}
        with (
            Producer(bootstrap_servers=broker.bootstrap, acks="rack", client_id="remote-a", **settings) as a,
            Producer(bootstrap_servers=broker.bootstrap, acks="rack", client_id="remote-b", **settings) as b,
        ):
            for i in range(1000):
                if i == 200:
                    broker.inject("Produce", count=2, drop=True)
                a.send("rack-remote", b"a%d" % i)
                b.send("rack-remote", b"b%d" % i)
            a.flush(timeout=60)
            b.flush(timeout=60)
            stats = [a.monitor.stats, b.monitor.stats]
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    values = {r["value"] for p in range(2) for r in broker.records("rack-remote", p)}
    assert values >= {b"a%d" % i for i in range(1000)} | {b"b%d" % i for i in range(1000)}
    assert sum(s.resent for s in stats) > 0  # the dropped requests' records came back as resends
    assert all(s.confirmed + s.resent_acknowledged >= 1000 for s in stats)


def test_perf_produce_takes_acks_rack(broker: InProcessBroker) -> None:
    broker.create_topic("rack-perf", 1)
    args = ["perf", "produce", "--bootstrap-server", broker.bootstrap, "--topic", "rack-perf"]
    args += ["--num-records", "2000", "--record-size", "100", "--acks", "rack", "--json"]
    out = subprocess.run(
        [sys.executable, "-m", "hmb_cmd", *args], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["config"]["acks"] == "rack" and result["records"] == 2000
    assert broker.watermarks("rack-perf")["high_watermark"] == 2000  # flush() waited for the monitor


def test_a_record_refused_at_once_is_not_backed_up(broker: InProcessBroker) -> None:
    broker.create_topic("rack-refused", 1)
    with Producer(bootstrap_servers=broker.bootstrap, acks="rack", max_request_size=1000, **FAST) as p:
        refused = p.send("rack-refused", b"x" * 2000)
        assert refused.exception(0) is not None  # MESSAGE_TOO_LARGE, told at once
        p.send("rack-refused", b"fits")
        p.flush(timeout=30)  # returns: the refused record is nobody's to resend
        assert (p.monitor.stats.backups, p.monitor.stats.confirmed, p.monitor.stats.resent) == (1, 1, 0)


def test_flush_waits_while_receipts_keep_coming_and_resends_only_what_stopped(
    broker: InProcessBroker,
) -> None:
    """Receipts trickling in for twice ``receipt_wait_ms`` are late, not lost: flush resends only
    the two records whose receipts never come (a fixed wait would resend about half of them)."""
    import threading
    import time

    from hmb_client.rack.backups import Backup
    from hmb_client.rack.monitor import Monitor

    broker.create_topic("rack-late", 1)
    monitor = Monitor(broker.bootstrap, "rack-late-origin", receipt_wait_ms=1000)
    try:
        for i in range(22):
            monitor.backup(Backup("rack-late", str(i), b"late-%d" % i, partition=0))

        def trickle() -> None:  # a slow ZooKeeper: one receipt every 0.1 s, 2 s in all
            for i in range(20):
                time.sleep(0.1)
                monitor.confirm([("rack-late", str(i))])

        feeder = threading.Thread(target=trickle)
        feeder.start()
        assert monitor.flush(timeout=60)
        feeder.join()
        assert monitor.stats.confirmed == 20
        assert monitor.stats.resent == 2
    finally:
        monitor.close()
    assert [r["value"] for r in broker.records("rack-late", 0)] == [b"late-20", b"late-21"]
