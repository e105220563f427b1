"""Group members whose connections go away, against the real broker process.

The network layer notices a closed connection and ends the member's pending
JoinGroup or SyncGroup; these tests check that end to end, with real
sockets (``shutdown``, ``close``).  Timeouts are short (the broker is started
with ``group.min.session.timeout.ms=100``).
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from broker_process import BrokerProcess
from wire import WireClient
from wire_groups import (
    JOIN,
    SYNC,
    heartbeat,
    join,
    member_id,
    receive,
    send_join,
    stable_member,
    sync,
    sync_body,
    wait_for,
)

from kproto import ErrorCode


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    data: Path = tmp_path_factory.mktemp("groups") / "data"
    with BrokerProcess(data, "group.min.session.timeout.ms=100", "num.partitions=2") as b:
        yield b


@pytest.fixture
def group(request: pytest.FixtureRequest) -> str:
    return "g-" + request.node.name


def test_members_whose_connections_are_gone_do_not_block_a_rebalance(
    shared: BrokerProcess, group: str
) -> None:
    """a's JoinGroup is pending when its client disconnects, b simply dies: the newcomer c gets the
    group after about one session timeout (1 s), not the rebalance timeout (60 s).

    (Whether a's JoinGroup reaches the coordinator before the broker sees the
    disconnect is up to the scheduler; both orders must end the same way.  The
    abandoned-join order is tested exactly in virtual time in test_group_coordinator.)"""
    kw: dict[str, Any] = {"session_ms": 1000, "rebalance_ms": 60_000}
    a, b, c = (WireClient(shared.bootstrap, timeout=30) for _ in range(3))
    try:
        ja = stable_member(a, group, **kw)
        mid_b = member_id(b, group, **kw)
        cid_b = send_join(b, group, mid_b, **kw)
        wait_for(lambda: heartbeat(a, group, 1, ja.member_id) == ErrorCode.REBALANCE_IN_PROGRESS, "b joined")
        join(a, group, ja.member_id, **kw)
        receive(b, JOIN, 5, cid_b)
        sync(a, group, 2, ja.member_id, {})
        sync(b, group, 2, mid_b)
        mid_c = member_id(c, group, **kw)
        cid_c = send_join(c, group, mid_c, **kw)
        wait_for(lambda: heartbeat(a, group, 2, ja.member_id) == ErrorCode.REBALANCE_IN_PROGRESS, "rebalance")
        send_join(a, group, ja.member_id, **kw)  # pending: b has not rejoined
        a.sock.shutdown(socket.SHUT_WR)  # ... and a's client goes away
        b.close()
        start = time.monotonic()
        jc = receive(c, JOIN, 5, cid_c)
        assert time.monotonic() - start < 10
        assert (jc.error_code, jc.generation_id, [m.member_id for m in jc.members]) == (0, 3, [mid_c])
        assert a.read_frame() is None, "an abandoned JoinGroup gets no answer"
    finally:
        for client in (a, b, c):
            client.close()


def test_a_follower_that_disconnects_while_waiting_in_sync_expires(shared: BrokerProcess, group: str) -> None:
    """A pending SyncGroup keeps its member alive only while its client is there."""
    kw: dict[str, Any] = {"session_ms": 1000}
    with WireClient(shared.bootstrap) as a, WireClient(shared.bootstrap) as b:
        ja = stable_member(a, group, **kw)
        mid_b = member_id(b, group, **kw)
        cid_b = send_join(b, group, mid_b, **kw)
        wait_for(lambda: heartbeat(a, group, 1, ja.member_id) == ErrorCode.REBALANCE_IN_PROGRESS, "b joined")
        join(a, group, ja.member_id, **kw)
        receive(b, JOIN, 5, cid_b)
        b.send(SYNC, 3, sync_body(group, 2, mid_b))  # waits for the leader's SyncGroup ...
        b.sock.shutdown(socket.SHUT_WR)  # ... until b's client goes away
        # the leader keeps heartbeating without syncing; b's session runs out
        waited = wait_for(
            lambda: heartbeat(a, group, 2, ja.member_id) == ErrorCode.REBALANCE_IN_PROGRESS, "b expires"
        )
        assert waited < 10
        assert b.read_frame() is None, "an abandoned SyncGroup gets no answer"
        j = join(a, group, ja.member_id, **kw)
        assert [m.member_id for m in j.members] == [ja.member_id]
