"""ControlledShutdown v0-v3 in process, on a broker alone (its own controller).

The cluster's side (the controller moving leaderships, NOT_CONTROLLER on
the others) runs in tests/cluster/test_cluster_control.py with real brokers.
What can fail here: v0's header without a client id read wrongly, another
broker's id accepted by a broker that knows no other, an unauthorised
principal let through (the request is inter-broker: ClusterAction).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hmb.security.acl import CLUSTER_NAME, Operation, ResourceType
from kproto import ApiKey, ErrorCode, decode_request, encode_request

from .acls import AUTHORIZER, acl, as_user, grant
from .bodies import metadata_body
from .harness import InProcessBroker

CONTROLLED_SHUTDOWN = ApiKey.CONTROLLED_SHUTDOWN


def test_v0_header_has_no_client_id() -> None:
    frame = encode_request(CONTROLLED_SHUTDOWN, 0, 7, {"broker_id": 3}, client_id="ignored")
    assert frame == bytes.fromhex("0000000c000700000000000700000003")
    request = decode_request(frame)
    assert (request.correlation_id, request.client_id, request.body.broker_id) == (7, None, 3)
    v1 = decode_request(encode_request(CONTROLLED_SHUTDOWN, 1, 7, {"broker_id": 3}, client_id="c"))
    assert v1.client_id == "c"


@pytest.mark.parametrize("version", range(4))
async def test_alone_its_own_id_has_nothing_to_move(broker: InProcessBroker, version: int) -> None:
    await broker.request(ApiKey.METADATA, 8, metadata_body("t"))
    resp = await broker.request(
        CONTROLLED_SHUTDOWN, version, {"broker_id": broker.config.node_id, "broker_epoch": 5}
    )
    assert (resp.error_code, list(resp.remaining_partitions)) == (ErrorCode.NONE, [])


@pytest.mark.parametrize("version", [0, 3])
async def test_alone_another_id_is_not_available(broker: InProcessBroker, version: int) -> None:
    resp = await broker.request(
        CONTROLLED_SHUTDOWN, version, {"broker_id": broker.config.node_id + 1, "broker_epoch": -1}
    )
    assert (resp.error_code, list(resp.remaining_partitions)) == (ErrorCode.BROKER_NOT_AVAILABLE, [])


async def test_needs_cluster_action(tmp_path: Path) -> None:
    b = InProcessBroker(tmp_path / "data", AUTHORIZER, "super.users=User:admin")
    try:
        body = {"broker_id": b.config.node_id, "broker_epoch": -1}
        resp = await b.request(CONTROLLED_SHUTDOWN, 3, body, session=as_user("alice"))
        assert resp.error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        await grant(b, acl(ResourceType.CLUSTER, CLUSTER_NAME, "User:alice", Operation.CLUSTER_ACTION))
        resp = await b.request(CONTROLLED_SHUTDOWN, 3, body, session=as_user("alice"))
        assert resp.error_code == ErrorCode.NONE
    finally:
        b.close()
