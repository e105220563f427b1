"""ApiVersions v0-v4 in process: the advertised table is the handler registry.

v1 adds throttle_time_ms, v3 the client software name and version (request)
and flexible encoding and the feature levels (``transaction.version`` 2:
KIP-890 part 2 is served), v4 only allows a supported feature's minimum to
be 0.  A request newer than v4 is answered by the dispatcher in the v0 layout with UNSUPPORTED_VERSION (see
``test_dispatch.py``).  What can fail: a key advertised that is not served
(or the other way round), a minimum above 0 that old clients cannot use.
"""

from __future__ import annotations

import pytest

from hmb.api import HANDLERS
from kproto import ApiKey

from .harness import InProcessBroker

BODY = {"client_software_name": "t", "client_software_version": "1"}


LEGACY_APIS = (
    ApiKey.PRODUCE,
    ApiKey.FETCH,
    ApiKey.LIST_OFFSETS,
    ApiKey.METADATA,
    ApiKey.OFFSET_COMMIT,
    ApiKey.OFFSET_FETCH,
    ApiKey.FIND_COORDINATOR,
    ApiKey.JOIN_GROUP,
    ApiKey.HEARTBEAT,
    ApiKey.LEAVE_GROUP,
    ApiKey.SYNC_GROUP,
    ApiKey.DESCRIBE_GROUPS,
    ApiKey.LIST_GROUPS,
    ApiKey.API_VERSIONS,
)


def table(body: object) -> dict[int, tuple[int, int]]:
    return {k.api_key: (k.min_version, k.max_version) for k in body.api_keys}  # type: ignore[attr-defined]


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4])
async def test_the_table_is_the_registry(broker: InProcessBroker, version: int) -> None:
    body = await broker.request(ApiKey.API_VERSIONS, version, BODY)
    assert body.error_code == 0
    assert table(body) == {h.api_key: (h.min_version, h.max_version) for h in HANDLERS.values()}
    assert table(body)[ApiKey.API_VERSIONS] == (0, 4)
    # Clients pinned to Kafka 0.8-0.10 send version 0 of the APIs they know; APIs added later
    # start where Kafka 4.x starts them (DescribeConfigs v0 is gone there).
    legacy = [k for k in LEGACY_APIS if k in table(body)]
    assert all(table(body)[k][0] == 0 for k in legacy), "old clients need min version 0 of the old APIs"
    assert len(legacy) == len(LEGACY_APIS)
    if version >= 1:
        assert body.throttle_time_ms == 0


async def test_advertised_table(broker: InProcessBroker) -> None:
    resp = await broker.request(ApiKey.API_VERSIONS, 4, BODY)
    expected = {
        ApiKey.PRODUCE: (0, 13),
        ApiKey.FETCH: (0, 18),
        ApiKey.LIST_OFFSETS: (0, 11),
        ApiKey.METADATA: (0, 13),
        ApiKey.FIND_COORDINATOR: (0, 6),
        ApiKey.INIT_PRODUCER_ID: (0, 6),
        ApiKey.CREATE_TOPICS: (0, 7),
        ApiKey.DELETE_TOPICS: (0, 6),
    }
    assert {k: table(resp).get(k) for k in expected} == expected


@pytest.mark.parametrize("version", [3, 4])
async def test_transaction_version_2_is_finalized(broker: InProcessBroker, version: int) -> None:
    """A Kafka 4 client runs KIP-890 part 2 only when ``transaction.version`` 2 is finalized."""
    body = await broker.request(ApiKey.API_VERSIONS, version, BODY)
    tagged = body.tagged_fields
    finalized = {f.name: (f.min_version_level, f.max_version_level) for f in tagged["finalized_features"]}
    assert finalized == {"transaction.version": (2, 2)}
    assert tagged["finalized_features_epoch"] >= 0
    supported = {f.name: (f.min_version, f.max_version) for f in tagged["supported_features"]}
    assert supported == {"transaction.version": (0, 2)}
    served = table(body)
    for key, version_needed in ((ApiKey.PRODUCE, 12), (ApiKey.END_TXN, 5), (ApiKey.TXN_OFFSET_COMMIT, 5)):
        assert served[key][1] >= version_needed
