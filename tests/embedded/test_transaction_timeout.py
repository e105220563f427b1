"""A transaction left open past ``transaction.timeout.ms`` is aborted when the broker's clock moves.

The broker runs in the test process (``hmb.Broker``); the producer speaks
the transaction APIs over a real socket; no sleeping: the clock is moved
and the coordinator aborts at once.  What can fail: a transaction that
outlives its timeout and blocks read_committed readers for ever, or one
aborted before its time.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from wire import WireClient, produce_body

from hmb.embedded import EmbeddedBroker
from kproto import ApiKey, ErrorCode
from kproto.records.default_builder import RecordBatchBuilder


def _state(client: WireClient, tid: str) -> Any:
    reply = client.request(ApiKey.DESCRIBE_TRANSACTIONS, 0, {"transactional_ids": [tid]})
    return reply.transaction_states[0]


def test_an_expired_transaction_is_aborted_when_the_clock_moves(hmb_fresh_broker: EmbeddedBroker) -> None:
    broker = hmb_fresh_broker
    topic = broker.create_topic("slow-txn")
    with WireClient(broker.bootstrap_servers) as client:
        init = {"transactional_id": "slow", "transaction_timeout_ms": 30_000}
        ids = client.request(ApiKey.INIT_PRODUCER_ID, 1, init)
        assert ids.error_code == ErrorCode.NONE
        pid, epoch = ids.producer_id, ids.producer_epoch
        add = {
            "v3_and_below_transactional_id": "slow",
            "v3_and_below_producer_id": pid,
            "v3_and_below_producer_epoch": epoch,
            "v3_and_below_topics": [{"name": topic, "partitions": [0]}],
        }
        added = client.request(ApiKey.ADD_PARTITIONS_TO_TXN, 1, add)
        assert added.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code == 0
        records = RecordBatchBuilder(
            producer_id=pid, producer_epoch=epoch, base_sequence=0, is_transactional=True
        )
        records.append(b"k", b"never committed")
        body = {**produce_body(topic, 0, records.build()), "transactional_id": "slow"}
        produced = client.request(ApiKey.PRODUCE, 3, body)
        assert produced.responses[0].partition_responses[0].error_code == ErrorCode.NONE

        broker.advance_clock(timedelta(seconds=29))
        assert _state(client, "slow").transaction_state == "Ongoing"  # not yet
        broker.advance_clock(timedelta(seconds=2))
        state = _state(client, "slow")
        assert (state.transaction_state, state.producer_epoch) == ("CompleteAbort", epoch + 1)
        assert broker.watermarks(topic)["high_watermark"] == 2  # the record and its ABORT marker
        end = {"transactional_id": "slow", "producer_id": pid, "producer_epoch": epoch, "committed": True}
        assert client.request(ApiKey.END_TXN, 1, end).error_code == ErrorCode.INVALID_PRODUCER_EPOCH
