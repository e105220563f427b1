"""pytest fixtures that give each test a real Kafka-compatible broker: hmb, in the test process.

Installed with the package (entry point ``pytest11``); nothing starts until
a test asks for a fixture, and this module imports no broker code until
then, so it costs nothing in test runs that do not use it.

Fixtures:

* ``hmb_broker`` (session): one broker for the whole run (per pytest-xdist
  worker: each worker is its own process with its own broker).
* ``hmb_fresh_broker`` (function): a broker of the test's own, stopped after it.
* ``hmb_test_broker`` (function): the broker a test should use under
  ``--hmb-isolation``: the session broker (``session``, the default) or a
  fresh one (``test``).
* ``hmb_bootstrap_servers`` (session) and ``hmb_bootstrap`` (function): the
  ``host:port`` of ``hmb_broker`` and ``hmb_test_broker``.
* ``hmb_topic`` (function): a factory ``hmb_topic(partitions=1)`` creating a
  topic of a fresh name on ``hmb_test_broker``, deleted after the test.

Options:

* ``--hmb-external=HOST:PORT`` runs the same tests against any
  Kafka-compatible broker (a real Kafka in CI): the fixtures then give that
  address, topics are created and deleted over the wire, and a test that
  needs the control API (faults, clock, inspection) is skipped.
* ``--hmb-isolation=session|test``: see ``hmb_test_broker``.
"""

from __future__ import annotations

import itertools
import os
import re
import socket
import struct
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from hmb.embedded import EmbeddedBroker

_names = itertools.count()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("hmb", "hmb: an in-process Kafka-compatible broker for tests")
    group.addoption(
        "--hmb-external",
        metavar="HOST:PORT",
        default=None,
        help="run the hmb fixtures against this Kafka-compatible broker instead of an embedded hmb",
    )
    group.addoption(
        "--hmb-isolation",
        choices=("session", "test"),
        default="session",
        help="hmb_test_broker/hmb_bootstrap/hmb_topic: one broker per session (default) or per test",
    )


class ExternalBroker:
    """A broker in another process: its address, and topics created and deleted over the wire."""

    def __init__(self, bootstrap_servers: str) -> None:
        self.bootstrap_servers = bootstrap_servers
        host, _, port = bootstrap_servers.rpartition(":")
        self.address = (host, int(port))

    def create_topic(self, name: str, partitions: int = 1) -> str:
        body = {
            "topics": [
                {
                    "name": name,
                    "num_partitions": partitions,
                    "replication_factor": -1,
                    "assignments": [],
                    "configs": [],
                }
            ],
            "timeout_ms": 30_000,
            "validate_only": False,
        }
        reply = self._request(19, 4, body)  # CreateTopics v4: replication factor -1 is the broker's default
        code = reply.topics[0].error_code
        if code not in (0, 36):  # 36: TOPIC_ALREADY_EXISTS
            raise RuntimeError(f"creating topic {name} on {self.bootstrap_servers} failed with error {code}")
        return name

    def delete_topic(self, name: str) -> None:
        self._request(20, 3, {"topic_names": [name], "timeout_ms": 30_000})

    def __getattr__(self, name: str) -> Any:
        pytest.skip(f"{name}() needs the embedded broker's control API; not available with --hmb-external")

    def _request(self, api_key: int, version: int, body: dict[str, Any]) -> Any:
        import kproto

        frame = kproto.encode_request(api_key, version, correlation_id=1, body=body, client_id="hmb-pytest")
        with socket.create_connection(self.address, timeout=30) as sock:
            sock.sendall(frame)
            head = _read_exact(sock, 4)
            payload = _read_exact(sock, struct.unpack(">i", head)[0])
        return kproto.decode_response(api_key, version, head + payload).body


def _read_exact(sock: socket.socket, n: int) -> bytes:
    out = b""
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            raise ConnectionError("the broker closed the connection")
        out += chunk
    return out


@pytest.fixture(scope="session")
def hmb_broker(pytestconfig: pytest.Config) -> Iterator[EmbeddedBroker | ExternalBroker]:
    """One broker for the session (for each xdist worker)."""
    external = pytestconfig.getoption("hmb_external")
    if external:
        yield ExternalBroker(external)
        return
    from hmb.embedded import EmbeddedBroker

    with EmbeddedBroker() as broker:
        yield broker


@pytest.fixture
def hmb_fresh_broker(pytestconfig: pytest.Config) -> Iterator[EmbeddedBroker | ExternalBroker]:
    """A broker of this test's own (the external broker under ``--hmb-external``)."""
    external = pytestconfig.getoption("hmb_external")
    if external:
        yield ExternalBroker(external)
        return
    from hmb.embedded import EmbeddedBroker

    with EmbeddedBroker() as broker:
        yield broker


@pytest.fixture
def hmb_test_broker(request: pytest.FixtureRequest) -> EmbeddedBroker | ExternalBroker:
    """The session broker, or with ``--hmb-isolation=test`` a fresh one."""
    isolation = request.config.getoption("hmb_isolation")
    name = "hmb_fresh_broker" if isolation == "test" else "hmb_broker"
    broker: EmbeddedBroker | ExternalBroker = request.getfixturevalue(name)
    return broker


@pytest.fixture(scope="session")
def hmb_bootstrap_servers(hmb_broker: EmbeddedBroker | ExternalBroker) -> str:
    return hmb_broker.bootstrap_servers


@pytest.fixture
def hmb_bootstrap(hmb_test_broker: EmbeddedBroker | ExternalBroker) -> str:
    return hmb_test_broker.bootstrap_servers


@pytest.fixture
def hmb_topic(
    request: pytest.FixtureRequest, hmb_test_broker: EmbeddedBroker | ExternalBroker
) -> Iterator[Callable[..., str]]:
    """``hmb_topic(partitions=1, name=None)``: a new topic, unique across tests and xdist workers."""
    made: list[str] = []
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    stem = re.sub(r"[^a-zA-Z0-9._-]", "-", request.node.name)[:100]

    def make(partitions: int = 1, name: str | None = None) -> str:
        topic = name or f"{stem}-{worker}-{next(_names)}"
        hmb_test_broker.create_topic(topic, partitions)
        made.append(topic)
        return topic

    yield make
    for topic in made:
        try:
            hmb_test_broker.delete_topic(topic)
        except Exception:
            pass
