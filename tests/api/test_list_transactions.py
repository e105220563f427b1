"""ListTransactions v0-v2 in process: transactional ids, filtered by state, producer, duration, pattern.

v1 adds the duration filter, v2 the transactional id pattern.  What can
fail: a filter ignored, an unknown state name not reported back.
"""

from __future__ import annotations

from typing import Any

import pytest

from kproto import ApiKey, ErrorCode

from . import txn
from .harness import InProcessBroker

LIST = ApiKey.LIST_TRANSACTIONS


def _body(**kw: Any) -> dict[str, Any]:
    return {
        "state_filters": [],
        "producer_id_filters": [],
        "duration_filter": -1,
        "transactional_id_pattern": None,
        **kw,
    }


async def _listed(b: InProcessBroker, version: int = 2, **kw: Any) -> list[tuple[str, str]]:
    resp = await b.request(LIST, version, _body(**kw))
    assert resp.error_code == ErrorCode.NONE
    return sorted((s.transactional_id, s.transaction_state) for s in resp.transaction_states)


@pytest.mark.parametrize("version", [0, 1, 2])
async def test_filters(broker: InProcessBroker, version: int) -> None:
    await txn.topic(broker, "l")
    a = await txn.producer(broker, "app-a")
    await txn.producer(broker, "app-b")
    await a.add("l")
    assert await _listed(broker, version) == [("app-a", "Ongoing"), ("app-b", "Empty")]
    assert await _listed(broker, version, state_filters=["Ongoing"]) == [("app-a", "Ongoing")]
    assert await _listed(broker, version, producer_id_filters=[a.producer_id]) == [("app-a", "Ongoing")]
    resp = await broker.request(LIST, version, _body(state_filters=["Bogus", "Empty"]))
    assert list(resp.unknown_state_filters) == ["Bogus"]
    assert [s.transactional_id for s in resp.transaction_states] == ["app-b"]


async def test_duration_and_pattern(broker: InProcessBroker) -> None:
    await txn.topic(broker, "l")
    a = await txn.producer(broker, "app-a", timeout_ms=600_000)  # open longer than the clock moves
    await txn.producer(broker, "other")
    await a.add("l")
    assert await _listed(broker, 1, duration_filter=60_000) == []
    broker.broker.clock.advance(61)
    assert await _listed(broker, 1, duration_filter=60_000) == [("app-a", "Ongoing")]
    assert await _listed(broker, 2, transactional_id_pattern="app-.*") == [("app-a", "Ongoing")]
    assert await _listed(broker, 2, transactional_id_pattern="app") == []  # the whole id must match
    resp = await broker.request(LIST, 2, _body(transactional_id_pattern="("))
    assert resp.error_code == ErrorCode.INVALID_REQUEST
