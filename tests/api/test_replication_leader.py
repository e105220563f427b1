"""The leader's side of replication through the handlers, in-process: a follower's Fetch
(replica_id >= 0) reads to the log end and moves the high watermark; consumers read only
up to it; acks=all waits for the in-sync replicas, or answers NOT_ENOUGH_REPLICAS,
NOT_ENOUGH_REPLICAS_AFTER_APPEND or REQUEST_TIMED_OUT.

The cluster is a stand-in (the view this broker would read from ZooKeeper, no
ZooKeeper): broker 0 leads partition 0 in epoch 5; brokers 1 and 2 follow."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import trio
import trio.testing

from hmb.api.replica_fetch import replica_id
from hmb.cluster.layout import PartitionState, TopicAssignment
from hmb.cluster.view import ClusterView
from hmb.replication.roles import Replication
from kproto import ApiKey, ErrorCode
from kproto.records import read_records

from .bodies import batch, fetch_one, fetch_req, produce_body, produce_one
from .harness import InProcessBroker, in_background

EPOCH = 5


class StandInCluster:
    """What the handlers use of a ClusterNode: the view, who leads, the replication."""

    def __init__(self, view: ClusterView, replication: Replication) -> None:
        self.view = view
        self.broker_id = 0
        self.replication = replication

    def leads(self, topic: str, partition: int) -> bool:
        return self.view.leader(topic, partition) == self.broker_id

    def view_trusted(self) -> bool:
        return True  # connected to its (absent) ZooKeeper throughout


async def leading(broker: InProcessBroker, topic: str, isr: tuple[int, ...]) -> Replication:
    """Make ``broker`` (id 0) the leader of ``topic``-0 (one record in it) with ``isr``."""
    await produce_one(broker, topic, batch([b"before"]))
    state = PartitionState(0, EPOCH, isr, 1, 0)
    view = ClusterView(topics={topic: TopicAssignment({0: (0, 1, 2)}, "")}, states={(topic, 0): state})
    b = broker.broker
    node = SimpleNamespace(broker_id=0, config=b.config, logs=b.logs, view=view, session=None)
    replication = Replication(node)  # type: ignore[arg-type]
    b.services.cluster = StandInCluster(view, replication)  # type: ignore[assignment]
    plog = b.logs.get(topic, 0)
    assert plog is not None
    replication._lead((topic, 0), plog, state, (0, 1, 2))
    return replication


async def follower_fetch(broker: InProcessBroker, topic: str, replica: int, offset: int) -> Any:
    body = fetch_req([(topic, 0, offset)])
    body["replica_id"] = replica
    body["topics"][0]["partitions"][0].update(current_leader_epoch=EPOCH, last_fetched_epoch=-1)
    resp = await broker.request(ApiKey.FETCH, 12, body)
    return resp.responses[0].partitions[0]


async def produce_all(broker: InProcessBroker, topic: str, value: bytes, timeout_ms: int = 10000) -> Any:
    body = produce_body(topic, batch([value]), acks=-1)
    body["timeout_ms"] = timeout_ms
    resp = await broker.request(ApiKey.PRODUCE, 8, body)
    return resp.responses[0].partition_responses[0]


def values(p: Any) -> list[bytes | None]:
    return [r.value for r in read_records(p.records or b"")]


async def test_followers_move_the_high_watermark_and_answer_acks_all(broker: InProcessBroker) -> None:
    replication = await leading(broker, "r", isr=(0, 1, 2))
    consumer = await fetch_one(broker, "r", 0)
    assert (consumer.high_watermark, values(consumer)) == (0, []), "no follower heard from yet"
    copy = await follower_fetch(broker, "r", 1, 0)
    assert values(copy) == [b"before"] and copy.high_watermark == 0, "a follower reads to the log end"
    async with trio.open_nursery() as nursery:
        acked = in_background(nursery, lambda: produce_all(broker, "r", b"after"))
        # a consumer's long poll past the high watermark waits for it to move, not for appends
        poll = in_background(nursery, lambda: fetch_one(broker, "r", 1, max_wait_ms=20000, min_bytes=1))
        await trio.testing.wait_all_tasks_blocked()
        await follower_fetch(broker, "r", 1, 2)  # follower 1 has both records
        await trio.testing.wait_all_tasks_blocked()
        assert not acked.done.is_set(), "follower 2 is in sync and has not got them"
        assert (await fetch_one(broker, "r", 0)).high_watermark == 0
        await follower_fetch(broker, "r", 2, 2)
        answer = await acked.result()
        polled = await poll.result()
    assert (answer.error_code, answer.base_offset) == (ErrorCode.NONE, 1)
    assert values(polled) == [b"after"] and polled.high_watermark == 2
    consumer = await fetch_one(broker, "r", 0)
    assert (consumer.high_watermark, values(consumer)) == (2, [b"before", b"after"])
    assert replication.leaders[("r", 0)].followers[2].log_end == 2


async def test_acks_all_refusals(make_broker: Any) -> None:
    broker = make_broker("min.insync.replicas=2")
    replication = await leading(broker, "m", isr=(0,))
    plog = broker.broker.logs.get("m", 0)
    refused = await produce_all(broker, "m", b"no")
    assert refused.error_code == ErrorCode.NOT_ENOUGH_REPLICAS and plog.log_end_offset == 1, "nothing written"
    leader = replication.leaders[("m", 0)]
    leader.isr = (0, 1)  # follower 1 in sync (as if the ISR znode said so), but silent
    late = await produce_all(broker, "m", b"late", timeout_ms=200)
    assert late.error_code == ErrorCode.REQUEST_TIMED_OUT and plog.log_end_offset == 2, (
        "appended all the same"
    )
    one = await produce_one(broker, "m", batch([b"acks-one"]))
    assert one.error_code == ErrorCode.NONE, "acks=1 answers after the leader's append"
    assert values(await fetch_one(broker, "m", 0)) == [b"before"], "consumers see none of the new ones"
    async with trio.open_nursery() as nursery:
        waiting = in_background(nursery, lambda: produce_all(broker, "m", b"shrunk"))
        await trio.testing.wait_all_tasks_blocked()
        leader.isr = (0,)  # the ISR shrinks while the produce waits: the high watermark moves
        replication._advance(("m", 0))
        answer = await waiting.result()
    assert answer.error_code == ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND


def test_the_replica_id_of_every_fetch_version() -> None:
    def ctx(version: int, **body: Any) -> Any:
        return SimpleNamespace(request=SimpleNamespace(version=version, body=SimpleNamespace(**body)))

    assert replica_id(ctx(12, replica_id=3)) == 3
    assert replica_id(ctx(14, replica_id=-1)) == -1
    assert replica_id(ctx(15, replica_state=SimpleNamespace(replica_id=2, replica_epoch=-1))) == 2
    assert replica_id(ctx(15)) == -1
