"""FindCoordinator v0-v2 in process: every group and every transactional id is coordinated here.

v0 has no key type (a group); v1 adds the key type, throttle_time_ms and an
error message; v2 changes nothing else.  What can fail: a transactional
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


@pytest.mark.parametrize("version", [1, 2])
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
