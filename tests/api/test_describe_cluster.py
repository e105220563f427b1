"""DescribeCluster v0-v2 in process: this broker, the cluster id, this broker as controller.

v1 adds the endpoint type (a broker refuses a request for controllers),
v2 the fenced flag.  What can fail: another id than Metadata's, authorized
operations sent when not asked for (or missing when asked), a controller
endpoint request answered as a broker one.
"""

from __future__ import annotations

import pytest

from kproto import ApiKey, ErrorCode
from kproto.acl import Operation as AclOperation

from .bodies import metadata_body
from .harness import InProcessBroker

DESCRIBE_CLUSTER = ApiKey.DESCRIBE_CLUSTER
INT32_MIN = -(2**31)
#: Kafka's operations on the cluster resource
CLUSTER_OPS = {
    "ALTER",
    "ALTER_CONFIGS",
    "CLUSTER_ACTION",
    "CREATE",
    "DESCRIBE",
    "DESCRIBE_CONFIGS",
    "IDEMPOTENT_WRITE",
}


def body(ops: bool = False, endpoint_type: int = 1) -> dict[str, object]:
    return {
        "include_cluster_authorized_operations": ops,
        "endpoint_type": endpoint_type,
        "include_fenced_brokers": True,
    }


@pytest.mark.parametrize("version", range(3))
async def test_describes_this_broker(broker: InProcessBroker, version: int) -> None:
    resp = await broker.request(DESCRIBE_CLUSTER, version, body())
    md = await broker.request(ApiKey.METADATA, 8, metadata_body())
    assert (resp.error_code, resp.error_message, resp.throttle_time_ms) == (ErrorCode.NONE, None, 0)
    assert resp.cluster_id == md.cluster_id and resp.cluster_id
    assert resp.controller_id == md.controller_id == broker.config.node_id
    assert [(b.broker_id, b.host, b.port, b.rack) for b in resp.brokers] == [
        (b.node_id, b.host, b.port, b.rack) for b in md.brokers
    ]
    assert resp.cluster_authorized_operations == INT32_MIN
    if version >= 1:
        assert resp.endpoint_type == 1
    if version >= 2:
        assert [b.is_fenced for b in resp.brokers] == [False]


@pytest.mark.parametrize("version", [0, 2])
async def test_authorized_operations_when_asked(broker: InProcessBroker, version: int) -> None:
    resp = await broker.request(DESCRIBE_CLUSTER, version, body(ops=True))
    granted = {op.name for op in AclOperation if resp.cluster_authorized_operations & (1 << op)}
    assert granted == CLUSTER_OPS
    assert resp.cluster_authorized_operations & ~sum(1 << AclOperation[n] for n in CLUSTER_OPS) == 0


@pytest.mark.parametrize("version", [1, 2])
async def test_a_controller_endpoint_request_is_refused(broker: InProcessBroker, version: int) -> None:
    resp = await broker.request(DESCRIBE_CLUSTER, version, body(endpoint_type=2))
    assert resp.error_code == ErrorCode.UNSUPPORTED_ENDPOINT_TYPE
    assert "CONTROLLER" in resp.error_message
    assert (list(resp.brokers), resp.controller_id) == ([], -1)
