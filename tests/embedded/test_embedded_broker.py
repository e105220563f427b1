"""hmb.Broker's life: in a thread or in a caller's nursery, several at once, nothing left behind."""

from __future__ import annotations

import socket
import threading
from datetime import timedelta

import pytest
import trio
from wire import WireClient, metadata_body

import hmb
from hmb.embedded import EmbeddedBroker
from kproto import ApiKey


def _connectable(address: tuple[str, int]) -> bool:
    try:
        socket.create_connection(address, timeout=1).close()
        return True
    except OSError:
        return False


def test_hmb_broker_is_the_embedded_broker() -> None:
    assert hmb.Broker is EmbeddedBroker


def test_stopping_frees_the_thread_the_port_and_the_directory() -> None:
    threads = threading.active_count()
    broker = hmb.Broker().start()
    address, data_dir = broker.address, broker.data_dir
    assert broker.bootstrap_servers == f"127.0.0.1:{address[1]}"
    assert data_dir.is_dir() and _connectable(address)
    broker.stop()
    assert not data_dir.exists()
    assert not _connectable(address)
    assert threading.active_count() == threads
    with pytest.raises(RuntimeError, match="not running"):
        _ = broker.bootstrap_servers


def test_several_brokers_in_one_process_are_independent() -> None:
    with hmb.Broker() as a, hmb.Broker() as b:
        assert a.address != b.address and a.data_dir != b.data_dir
        a.create_topic("only-in-a")
        a.advance_clock(timedelta(hours=1))
        assert "only-in-a" in a.topics() and "only-in-a" not in b.topics()
        assert a.core.clock.skew == 3600 and b.core.clock.skew == 0  # type: ignore[union-attr]


def test_runs_in_a_callers_trio_nursery() -> None:
    """``await nursery.start(broker.run)``: no thread; the control API is awaited."""

    async def main() -> list[tuple[str, int, int]]:
        broker = hmb.Broker()
        async with trio.open_nursery() as nursery:
            bootstrap = await nursery.start(broker.run)
            await broker.control.create_topic("in-nursery", 2)

            def ask() -> list[tuple[str, int, int]]:
                with WireClient(bootstrap) as c:
                    topics = c.request(ApiKey.METADATA, 1, metadata_body("in-nursery")).topics
                    return [(t.name, t.error_code, len(t.partitions)) for t in topics]

            names = await trio.to_thread.run_sync(ask)
            requests = await broker.control.requests()
            assert requests[-1]["api_name"] == "METADATA"
            with pytest.raises(RuntimeError, match=r"await broker\.control"):
                broker.topics()  # the synchronous face needs the broker in its own thread
            nursery.cancel_scope.cancel()
        assert not broker.data_dir.exists()
        return names

    assert trio.run(main) == [("in-nursery", 0, 2)]


def test_a_broker_that_cannot_start_says_why() -> None:
    with hmb.Broker() as taken:
        port = taken.address[1]
        with pytest.raises(RuntimeError, match="did not start"):
            hmb.Broker(port=port).start()


def test_settings_are_kafkas_properties() -> None:
    with hmb.Broker({"num.partitions": "3"}) as broker:
        with WireClient(broker.bootstrap_servers) as c:
            c.request(ApiKey.METADATA, 1, metadata_body("auto"))  # auto-created with num.partitions
        assert broker.topics()["auto"] == 3
