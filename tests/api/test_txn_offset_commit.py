"""TxnOffsetCommit v0-v4 in process: a transaction's offsets, refused outside their transaction.

v2 adds the leader epoch, v3 the consumer's generation and member
(KIP-447) and flexible encoding.  Offsets becoming visible on commit only
are ``test_transactions.py``'s.  What can fail: offsets of an unknown
producer, of a group not added with AddOffsetsToTxn, or of a generation the
group does not have accepted.
"""

from __future__ import annotations

from typing import Any

import pytest

from kproto import ApiKey, ErrorCode

from . import txn
from .groups import fetch_offset, stable_member
from .harness import InProcessBroker

COMMIT = ApiKey.TXN_OFFSET_COMMIT


def commit_body(p: txn.Txn, group: str, topic: str, offset: int, **kw: Any) -> dict[str, Any]:
    return {
        "transactional_id": p.tid,
        "group_id": group,
        "producer_id": p.producer_id,
        "producer_epoch": p.epoch,
        "generation_id": -1,
        "member_id": "",
        "group_instance_id": None,
        "topics": [
            {
                "name": topic,
                "partitions": [
                    {
                        "partition_index": 0,
                        "committed_offset": offset,
                        "committed_leader_epoch": -1,
                        "committed_metadata": "m",
                    }
                ],
            }
        ],
        **kw,
    }


async def commit_code(b: InProcessBroker, body: dict[str, Any], version: int = 4) -> int:
    return int((await b.request(COMMIT, version, body)).topics[0].partitions[0].error_code)


@pytest.mark.parametrize("version", [0, 2, 3, 4])
async def test_refused_outside_the_transaction(broker: InProcessBroker, version: int) -> None:
    await txn.topic(broker, "in")
    p = await txn.producer(broker, "tx-o")
    assert await commit_code(broker, commit_body(p, "g", "in", 5), version) == ErrorCode.INVALID_TXN_STATE
    stranger = txn.Txn(broker, "tx-unknown", p.producer_id, 0)
    assert await commit_code(broker, commit_body(stranger, "g", "in", 5), version) == (
        ErrorCode.INVALID_PRODUCER_ID_MAPPING
    )
    assert await p.add_offsets("g") == ErrorCode.NONE
    assert await commit_code(broker, commit_body(p, "other", "in", 5), version) == ErrorCode.INVALID_TXN_STATE
    stale = txn.Txn(broker, p.tid, p.producer_id, p.epoch - 1)
    assert (
        await commit_code(broker, commit_body(stale, "g", "in", 5), version)
        == ErrorCode.INVALID_PRODUCER_EPOCH
    )
    assert (
        await commit_code(broker, commit_body(p, "g", "nope", 5), version)
        == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    )
    assert (await fetch_offset(broker, "g", "in")).committed_offset == -1


async def test_v3_checks_the_generation(broker: InProcessBroker) -> None:
    await txn.topic(broker, "in")
    member = await stable_member(broker, "gen")
    p = await txn.producer(broker, "tx-gen")
    assert await p.add_offsets("gen") == ErrorCode.NONE
    body = commit_body(p, "gen", "in", 3, generation_id=member.generation_id + 1, member_id=member.member_id)
    assert await commit_code(broker, body, 3) == ErrorCode.ILLEGAL_GENERATION
    body = commit_body(p, "gen", "in", 3, generation_id=member.generation_id, member_id="someone-else")
    assert await commit_code(broker, body, 3) == ErrorCode.UNKNOWN_MEMBER_ID
    body = commit_body(p, "gen", "in", 3, generation_id=-1, member_id="")
    assert await commit_code(broker, body, 3) == ErrorCode.UNKNOWN_MEMBER_ID  # the group has members
