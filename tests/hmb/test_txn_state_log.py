"""The transaction coordinator's state machine and its records in ``__transaction_state``.

What can fail: a move the table does not list taken silently, a record
that does not read back as written, Kafka's state numbers or names changed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hmb.broker import Broker
from hmb.txn.metadata import TransactionMetadata
from hmb.txn.state_log import decode_key, decode_value, encode_key, encode_value
from hmb.txn.states import TRANSITIONS, IllegalTransition, TxnEvent, TxnState, transition


def test_kafka_state_numbers_and_names() -> None:
    assert [(s.value, s.kafka_name) for s in TxnState] == [
        (0, "Empty"),
        (1, "Ongoing"),
        (2, "PrepareCommit"),
        (3, "PrepareAbort"),
        (4, "CompleteCommit"),
        (5, "CompleteAbort"),
        (6, "Dead"),
        (7, "PrepareEpochFence"),
    ]
    assert all(TxnState.from_kafka_name(s.kafka_name) is s for s in TxnState)


def test_a_commit_goes_through_prepare_and_an_illegal_move_raises() -> None:
    state = TxnState.EMPTY
    for event in (TxnEvent.ADD, TxnEvent.ADD, TxnEvent.END_COMMIT, TxnEvent.MARKERS_WRITTEN):
        state = transition("t", state, event)
    assert state is TxnState.COMPLETE_COMMIT
    with pytest.raises(IllegalTransition):
        transition("t", TxnState.EMPTY, TxnEvent.END_COMMIT)
    with pytest.raises(IllegalTransition):
        transition("t", TxnState.PREPARE_COMMIT, TxnEvent.ADD)
    assert not any(source is TxnState.DEAD for source, _ in TRANSITIONS)  # Dead is final


@pytest.mark.parametrize("state", [TxnState.EMPTY, TxnState.ONGOING, TxnState.PREPARE_COMMIT])
def test_records_read_back(state: TxnState) -> None:
    partitions = set() if state is TxnState.EMPTY else {("b", 1), ("a", 0), ("b", 0)}
    meta = TransactionMetadata("tx-é", 4242, 7, 60_000, state, partitions, start_ms=123, last_update_ms=456)
    key, value = encode_key(meta.transactional_id), encode_value(meta)
    assert key == b"\x00\x00\x00\x05tx-\xc3\xa9"  # version 0, then the id as an int16-length string
    assert value[:2] == b"\x00\x00"  # value version 0
    back = decode_value(decode_key(key), value)
    assert back == meta
    if state is TxnState.EMPTY:  # no partitions: a null array, as Kafka writes it
        assert value[17:21] == b"\xff\xff\xff\xff"


def test_the_state_topic_is_compacted_and_made_by_the_first_transaction(tmp_path: Path) -> None:
    from hmb.config import BrokerConfig
    from hmb.txn.state_log import TOPIC, TransactionStateLog

    broker = Broker(BrokerConfig(log_dirs=(tmp_path,)))
    broker.open()
    try:
        assert broker.logs.get(TOPIC, 0) is None  # no transaction yet, no topic (as Kafka)
        state_log = TransactionStateLog(broker.logs, broker.clock.wall_ms)
        assert state_log.load() == {}
        assert state_log.plog_of("any id") is broker.logs.get(TOPIC, 0)
        config = broker.logs.config_of(TOPIC)
        assert config.compact and not config.delete  # never deleted by age or size
    finally:
        broker.close()
