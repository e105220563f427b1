"""ACLs enforced in the handlers, as Kafka does, seen from a client without the right.

Every refusal is checked twice: the error the client gets, and that nothing
changed (no record appended, no offset committed, no topic created or
deleted).  The admin (``super.users``) sets the scene; alice and bob are
ordinary principals.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hmb.api.context import Session
from hmb.security.acl import Operation, PatternType, Permission, ResourceType
from kproto import ApiKey, ErrorCode
from tests.api.acls import ADMIN, AUTHORIZER, acl, as_user, grant
from tests.api.bodies import batch, fetch_req, metadata_body, produce_body, spec
from tests.api.groups import commit_body
from tests.api.harness import InProcessBroker

TOPIC_DENIED = ErrorCode.TOPIC_AUTHORIZATION_FAILED


@pytest.fixture
def secured(tmp_path: Path) -> InProcessBroker:
    return InProcessBroker(tmp_path / "data", AUTHORIZER, "super.users=User:admin")


async def _topic(b: InProcessBroker, name: str) -> None:
    body = {"topics": [spec(name)], "timeout_ms": 5000, "validate_only": False}
    made = await b.request(ApiKey.CREATE_TOPICS, 3, body, session=ADMIN)
    assert made.topics[0].error_code == ErrorCode.NONE


def _hw(b: InProcessBroker, topic: str) -> int:
    plog = b.broker.logs.get(topic, 0)
    assert plog is not None
    return int(plog.high_watermark)


async def _produce(b: InProcessBroker, session: Session, topic: str) -> int:
    resp = await b.request(ApiKey.PRODUCE, 8, produce_body(topic, batch([b"v"])), session=session)
    return int(resp.responses[0].partition_responses[0].error_code)


async def _fetch(b: InProcessBroker, session: Session, topic: str) -> int:
    resp = await b.request(ApiKey.FETCH, 11, fetch_req([(topic, 0, 0)]), session=session)
    return int(resp.responses[0].partitions[0].error_code)


async def test_produce_and_fetch_without_acls(secured: InProcessBroker) -> None:
    b = secured
    await _topic(b, "orders")
    assert await _produce(b, as_user("alice"), "orders") == TOPIC_DENIED
    assert _hw(b, "orders") == 0  # nothing appended
    assert await _fetch(b, as_user("alice"), "orders") == TOPIC_DENIED
    assert await _produce(b, ADMIN, "orders") == ErrorCode.NONE  # super user


async def test_write_without_read(secured: InProcessBroker) -> None:
    b = secured
    await _topic(b, "orders")
    await grant(b, acl(ResourceType.TOPIC, "orders", "User:alice", Operation.WRITE))
    alice = as_user("alice")
    assert await _produce(b, alice, "orders") == ErrorCode.NONE and _hw(b, "orders") == 1
    assert await _fetch(b, alice, "orders") == TOPIC_DENIED
    listed = await b.request(ApiKey.LIST_OFFSETS, 5, _list_offsets("orders"), session=alice)
    assert listed.topics[0].partitions[0].error_code == ErrorCode.NONE  # Write implies Describe


def _list_offsets(topic: str) -> dict[str, Any]:
    return {
        "replica_id": -1,
        "isolation_level": 0,
        "topics": [
            {
                "name": topic,
                "partitions": [{"partition_index": 0, "timestamp": -1, "current_leader_epoch": -1}],
            }
        ],
    }


async def test_deny_overrides_allow(secured: InProcessBroker) -> None:
    b = secured
    await _topic(b, "orders")
    await grant(
        b,
        acl(ResourceType.TOPIC, "orders", "User:alice", Operation.ALL),
        acl(ResourceType.TOPIC, "orders", "User:*", Operation.WRITE, Permission.DENY),
    )
    alice = as_user("alice")
    assert await _produce(b, alice, "orders") == TOPIC_DENIED and _hw(b, "orders") == 0
    assert await _fetch(b, alice, "orders") == ErrorCode.NONE


async def test_prefixed_acl(secured: InProcessBroker) -> None:
    b = secured
    for name in ("logs-app", "logsapp"):
        await _topic(b, name)
    await grant(b, acl(ResourceType.TOPIC, "logs-", "User:bob", Operation.READ, pattern=PatternType.PREFIXED))
    bob = as_user("bob")
    assert await _fetch(b, bob, "logs-app") == ErrorCode.NONE
    assert await _fetch(b, bob, "logsapp") == TOPIC_DENIED


async def test_metadata_lists_only_describable_topics(secured: InProcessBroker) -> None:
    b = secured
    for name in ("public", "secret"):
        await _topic(b, name)
    await grant(b, acl(ResourceType.TOPIC, "public", "User:*", Operation.DESCRIBE))
    alice = as_user("alice")
    everything = metadata_body()
    everything["topics"] = None
    listed = await b.request(ApiKey.METADATA, 8, everything, session=alice)
    assert [t.name for t in listed.topics] == ["public"]
    asked = await b.request(ApiKey.METADATA, 8, metadata_body("secret", "new-one"), session=alice)
    assert [t.error_code for t in asked.topics] == [TOPIC_DENIED, TOPIC_DENIED]
    assert "new-one" not in b.broker.logs.topics  # no auto-creation without Create


async def test_authorized_operations_are_what_the_acls_allow(secured: InProcessBroker) -> None:
    """KIP-430: Metadata and DescribeGroups report the operations this principal may do."""
    b = secured
    await _topic(b, "readable")
    await grant(
        b,
        acl(ResourceType.TOPIC, "readable", "User:alice", Operation.READ),
        acl(ResourceType.GROUP, "g", "User:alice", Operation.READ),
    )
    alice = as_user("alice")
    body = {**metadata_body("readable"), "include_topic_authorized_operations": True}
    body["include_cluster_authorized_operations"] = True
    md = await b.request(ApiKey.METADATA, 8, body, session=alice)
    read, describe = 1 << Operation.READ, 1 << Operation.DESCRIBE  # Read implies Describe
    assert md.topics[0].topic_authorized_operations == read | describe
    assert md.cluster_authorized_operations == 0
    groups = await b.request(
        ApiKey.DESCRIBE_GROUPS, 4, {"groups": ["g"], "include_authorized_operations": True}, session=alice
    )
    assert groups.groups[0].authorized_operations == read | describe


async def test_create_and_delete_topics_need_their_acls(secured: InProcessBroker) -> None:
    b = secured
    alice = as_user("alice")
    body = {"topics": [spec("made")], "timeout_ms": 5000, "validate_only": False}
    made = await b.request(ApiKey.CREATE_TOPICS, 3, body, session=alice)
    assert made.topics[0].error_code == TOPIC_DENIED and "made" not in b.broker.logs.topics
    await grant(b, acl(ResourceType.CLUSTER, "kafka-cluster", "User:alice", Operation.CREATE))
    made = await b.request(ApiKey.CREATE_TOPICS, 3, body, session=alice)
    assert made.topics[0].error_code == ErrorCode.NONE
    deleted = await b.request(
        ApiKey.DELETE_TOPICS, 3, {"topic_names": ["made"], "timeout_ms": 5000}, session=alice
    )
    assert deleted.responses[0].error_code == TOPIC_DENIED and "made" in b.broker.logs.topics


async def test_commit_needs_group_and_topic_read(secured: InProcessBroker) -> None:
    b = secured
    await _topic(b, "orders")
    alice = as_user("alice")
    body = commit_body("g1", -1, "", "orders", 5)

    async def commit() -> int:
        resp = await b.request(ApiKey.OFFSET_COMMIT, 7, body, session=alice)
        return int(resp.topics[0].partitions[0].error_code)

    assert await commit() == ErrorCode.GROUP_AUTHORIZATION_FAILED
    await grant(b, acl(ResourceType.GROUP, "g1", "User:alice", Operation.READ))
    assert await commit() == TOPIC_DENIED
    assert b.broker.offsets.get("g1", "orders", 0) is None  # nothing committed
    await grant(b, acl(ResourceType.TOPIC, "orders", "User:alice", Operation.READ))
    assert await commit() == ErrorCode.NONE
    fetched = await b.request(
        ApiKey.OFFSET_FETCH, 5, {"group_id": "g1", "topics": None}, session=as_user("bob")
    )
    assert fetched.error_code == ErrorCode.GROUP_AUTHORIZATION_FAILED and fetched.topics == []


async def test_group_membership_and_coordinator_need_group_acls(secured: InProcessBroker) -> None:
    b = secured
    bob = as_user("bob")
    found = await b.request(ApiKey.FIND_COORDINATOR, 2, {"key": "g2", "key_type": 0}, session=bob)
    assert found.error_code == ErrorCode.GROUP_AUTHORIZATION_FAILED
    beat = await b.request(
        ApiKey.HEARTBEAT,
        3,
        {"group_id": "g2", "generation_id": 1, "member_id": "m", "group_instance_id": None},
        session=bob,
    )
    assert beat.error_code == ErrorCode.GROUP_AUTHORIZATION_FAILED
    described = await b.request(
        ApiKey.DESCRIBE_GROUPS, 4, {"groups": ["g2"], "include_authorized_operations": False}, session=bob
    )
    assert described.groups[0].error_code == ErrorCode.GROUP_AUTHORIZATION_FAILED


async def test_idempotent_and_transactional_producers(secured: InProcessBroker) -> None:
    b = secured
    init = {"transactional_id": None, "transaction_timeout_ms": 60000}
    carol = as_user("carol")
    resp = await b.request(ApiKey.INIT_PRODUCER_ID, 1, init, session=carol)
    assert resp.error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    await grant(b, acl(ResourceType.TOPIC, "any", "User:carol", Operation.WRITE))
    resp = await b.request(ApiKey.INIT_PRODUCER_ID, 1, init, session=carol)
    assert resp.error_code == ErrorCode.NONE  # Write on some topic suffices (Kafka 3.0+)
    tx = await b.request(ApiKey.INIT_PRODUCER_ID, 1, {**init, "transactional_id": "tx"}, session=carol)
    assert tx.error_code == ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED


async def test_transactional_ids_and_the_transaction_apis(secured: InProcessBroker) -> None:
    from tests.api import txn

    b = secured
    await _topic(b, "t-open")
    await _topic(b, "t-closed")
    carol, bob = as_user("carol"), as_user("bob")
    await grant(
        b,
        acl(ResourceType.TRANSACTIONAL_ID, "tx", "User:carol", Operation.WRITE),
        acl(ResourceType.TOPIC, "t-open", "User:carol", Operation.WRITE),
    )
    found = await b.request(ApiKey.FIND_COORDINATOR, 2, {"key": "tx", "key_type": 1}, session=carol)
    assert found.error_code == ErrorCode.NONE  # Write implies Describe
    found = await b.request(ApiKey.FIND_COORDINATOR, 2, {"key": "tx", "key_type": 1}, session=bob)
    assert found.error_code == ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    init = await b.request(ApiKey.INIT_PRODUCER_ID, 4, txn.init_body("tx"), session=carol)
    assert init.error_code == ErrorCode.NONE
    pid, epoch = init.producer_id, init.producer_epoch
    add = {
        "v3_and_below_transactional_id": "tx",
        "v3_and_below_producer_id": pid,
        "v3_and_below_producer_epoch": epoch,
        "v3_and_below_topics": [
            {"name": "t-open", "partitions": [0]},
            {"name": "t-closed", "partitions": [0]},
        ],
    }
    resp = await b.request(ApiKey.ADD_PARTITIONS_TO_TXN, 3, add, session=carol)
    codes = {
        t.name: t.results_by_partition[0].partition_error_code for t in resp.results_by_topic_v3_and_below
    }
    assert codes == {"t-open": ErrorCode.OPERATION_NOT_ATTEMPTED, "t-closed": TOPIC_DENIED}
    resp = await b.request(ApiKey.ADD_PARTITIONS_TO_TXN, 3, add, session=bob)
    assert {t.results_by_partition[0].partition_error_code for t in resp.results_by_topic_v3_and_below} == {
        ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    }
    described = await b.request(ApiKey.DESCRIBE_TRANSACTIONS, 0, {"transactional_ids": ["tx"]}, session=carol)
    assert described.transaction_states[0].transaction_state == "Empty"  # nothing was added
    described = await b.request(ApiKey.DESCRIBE_TRANSACTIONS, 0, {"transactional_ids": ["tx"]}, session=bob)
    assert described.transaction_states[0].error_code == ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    body = {"state_filters": [], "producer_id_filters": [], "duration_filter": -1}
    listed = await b.request(ApiKey.LIST_TRANSACTIONS, 1, body, session=bob)
    assert list(listed.transaction_states) == []  # what bob may not describe is left out
    listed = await b.request(ApiKey.LIST_TRANSACTIONS, 1, body, session=carol)
    assert [s.transactional_id for s in listed.transaction_states] == ["tx"]
    markers = {
        "markers": [
            {
                "producer_id": pid,
                "producer_epoch": epoch,
                "transaction_result": True,
                "topics": [{"name": "t-open", "partition_indexes": [0]}],
                "coordinator_epoch": 0,
            }
        ]
    }
    resp = await b.request(ApiKey.WRITE_TXN_MARKERS, 1, markers, session=carol)
    assert resp.markers[0].topics[0].partitions[0].error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    assert _hw(b, "t-open") == 0


async def test_two_phase_commit_needs_its_own_operation(tmp_path: Path) -> None:
    """KIP-939: InitProducerId with enable2Pc needs TwoPhaseCommit on the id, beside Write."""
    from tests.api import txn

    b = InProcessBroker(
        tmp_path / "data", AUTHORIZER, "super.users=User:admin", "transaction.two.phase.commit.enable=true"
    )
    carol = as_user("carol")
    await grant(b, acl(ResourceType.TRANSACTIONAL_ID, "tx2", "User:carol", Operation.WRITE))
    body = txn.init_body("tx2", enable2_pc=True)
    refused = await b.request(ApiKey.INIT_PRODUCER_ID, 6, body, session=carol)
    assert refused.error_code == ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    plain = await b.request(ApiKey.INIT_PRODUCER_ID, 6, txn.init_body("tx2"), session=carol)
    assert plain.error_code == ErrorCode.NONE  # Write alone is a plain transactional producer
    await grant(b, acl(ResourceType.TRANSACTIONAL_ID, "tx2", "User:carol", Operation.TWO_PHASE_COMMIT))
    granted = await b.request(ApiKey.INIT_PRODUCER_ID, 6, body, session=carol)
    assert granted.error_code == ErrorCode.NONE
