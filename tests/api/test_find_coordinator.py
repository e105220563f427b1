"""FindCoordinator v0-v6 in process: every group and every transactional id is coordinated here.

v0 has no key type (a group); v1 adds the key type, throttle_time_ms and an
error message; v2 changes nothing else; v3 is flexible; v4 asks for a batch
of keys, each answered on its own; v5 changes no answer here; v6 adds key
type 2 (share groups, not served: INVALID_REQUEST).  What can fail: a transactional
producer told it has no coordinator, an unknown key type accepted.
"""

from __future__ import annotations

from typing import Any

import pytest

from kproto import ApiKey, ErrorCode

from .harness import InProcessBroker

FIND_COORDINATOR = ApiKey.FIND_COORDINATOR


async def test_find_coordinator_v0(broker: InProcessBroker) -> None:
    v0 = await broker.request(FIND_COORDINATOR, 0, {"key": "g"})
    assert (v0.error_code, v0.node_id, v0.host, v0.port) == (0, 0, "127.0.0.1", broker.port)


@pytest.mark.parametrize("version", [1, 2, 3])
async def test_find_coordinator_key_types(broker: InProcessBroker, version: int) -> None:
    group = await broker.request(FIND_COORDINATOR, version, {"key": "g", "key_type": 0})
    assert (group.error_code, group.error_message, group.node_id, group.port) == (0, None, 0, broker.port)
    assert group.throttle_time_ms == 0
    txn = await broker.request(FIND_COORDINATOR, version, {"key": "tx", "key_type": 1})
    assert (txn.error_code, txn.error_message, txn.node_id, txn.port) == (0, None, 0, broker.port)
    odd = await broker.request(FIND_COORDINATOR, version, {"key": "x", "key_type": 5})
    assert odd.error_code == ErrorCode.INVALID_REQUEST


async def test_the_coordinator_is_the_advertised_address(make_broker: Any) -> None:
    b = make_broker("advertised.listeners=PLAINTEXT://kafka.example:19092", "broker.id=3")
    resp = await b.request(FIND_COORDINATOR, 2, {"key": "g", "key_type": 0})
    assert (resp.node_id, resp.host, resp.port) == (3, "kafka.example", 19092)


@pytest.mark.parametrize("version", [4, 5, 6])
async def test_v4_answers_a_batch_of_keys(broker: InProcessBroker, version: int) -> None:
    groups = await broker.request(
        FIND_COORDINATOR, version, {"key_type": 0, "coordinator_keys": ["g1", "g2"]}
    )
    assert groups.throttle_time_ms == 0
    assert [
        (c.key, c.error_code, c.error_message, c.node_id, c.host, c.port) for c in groups.coordinators
    ] == [
        ("g1", 0, None, 0, "127.0.0.1", broker.port),
        ("g2", 0, None, 0, "127.0.0.1", broker.port),
    ]
    txn = await broker.request(FIND_COORDINATOR, version, {"key_type": 1, "coordinator_keys": ["tx"]})
    [c] = txn.coordinators
    assert (c.key, c.error_code, c.node_id, c.port) == ("tx", ErrorCode.NONE, 0, broker.port)
    share = await broker.request(FIND_COORDINATOR, version, {"key_type": 2, "coordinator_keys": ["g:t:0"]})
    assert [c.error_code for c in share.coordinators] == [ErrorCode.INVALID_REQUEST]
    none = await broker.request(FIND_COORDINATOR, version, {"key_type": 0, "coordinator_keys": []})
    assert list(none.coordinators) == []
