"""What the coordinator knows about one transactional id (Kafka's ``TransactionMetadata``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from hmb.txn.states import TxnEvent, TxnState, transition

NO_TIMESTAMP = -1
#: a two-phase-commit transaction's timeout (KIP-939), as Kafka records it: it never times out
NO_TIMEOUT_MS = 2**31 - 1


@dataclass
class TransactionMetadata:
    """One transactional id: its producer, epoch, state and the transaction in progress.

    ``partitions`` are those the open (or completing) transaction wrote to,
    the ``__consumer_offsets`` partition included once offsets were added;
    ``groups`` the consumer groups whose offsets it commits (memory only:
    the offsets themselves are in ``__consumer_offsets``).
    """

    transactional_id: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    state: TxnState = TxnState.EMPTY
    partitions: set[tuple[str, int]] = field(default_factory=set)
    start_ms: int = NO_TIMESTAMP  # when the open transaction's first partition was added
    last_update_ms: int = NO_TIMESTAMP
    groups: set[str] = field(default_factory=set)
    #: transaction version 2, epochs exhausted: the id the producer moves to once the ending
    #: transaction's markers are written (memory only; -1: none)
    next_producer_id: int = -1
    #: the producer id before the last such move, so that a retried EndTxn is recognised
    previous_producer_id: int = -1

    def fire(self, event: TxnEvent) -> TxnState:
        """Move along the table (:mod:`hmb.txn.states`); returns the new state."""
        self.state = transition(self.transactional_id, self.state, event)
        return self.state

    def expired(self, now_ms: int) -> bool:
        """An open transaction older than its timeout (the coordinator aborts it)."""
        return (
            self.state is TxnState.ONGOING
            and self.start_ms >= 0
            and self.timeout_ms != NO_TIMEOUT_MS
            and now_ms >= self.start_ms + self.timeout_ms
        )

    def sorted_partitions(self) -> list[tuple[str, list[int]]]:
        """The partitions by topic, as the state log and DescribeTransactions list them."""
        by_topic: dict[str, list[int]] = {}
        for topic, partition in sorted(self.partitions):
            by_topic.setdefault(topic, []).append(partition)
        return list(by_topic.items())
