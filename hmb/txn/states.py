"""The states of one transactional id and the only moves between them.

Kafka's transaction states, with the numbers its ``__transaction_state``
records carry and the names DescribeTransactions and ListTransactions print::

                 InitProducerId                    AddPartitionsToTxn / AddOffsetsToTxn
      (new) ---------------------> Empty ----------------------------------+
                                   ^  ^                                    v
                 InitProducerId    |  |                                 Ongoing --+
      CompleteCommit / Abort ------+  |                                    |      | InitProducerId of a
                                      |                    EndTxn(commit)  |      | new instance, or the
      CompleteCommit <-- markers -- PrepareCommit <------------------------+      | transaction's timeout
                                                           EndTxn(abort)   |      v
      CompleteAbort  <-- markers -- PrepareAbort  <------------------------+  PrepareEpochFence
                                         ^                                        |
                                         +--------- abort with the bumped epoch --+
      Empty / CompleteCommit / CompleteAbort -- transactional.id.expiration.ms --> Dead

Rules of this module:

* Every move is a row of :data:`TRANSITIONS` ((state, event) -> state);
  the coordinator fires events and never assigns a state itself, so a
  move that is not in the table is a bug that raises
  :class:`IllegalTransition` instead of corrupting the state.
* A completed transaction (CompleteCommit, CompleteAbort) may start the
  next one directly: the producer does not go through Empty between
  transactions.
* Transaction version 2 (EndTxn v5+) may abort from Empty, CompleteCommit or
  CompleteAbort: a client that began a transaction the broker never heard
  of (its first Produce never arrived) ends it, and the epoch is bumped all
  the same.
* Prepare* and PrepareEpochFence are the states in which markers are being
  written: requests for the id meanwhile are answered
  CONCURRENT_TRANSACTIONS (the client retries).
"""

from __future__ import annotations

from enum import Enum, IntEnum


class TxnState(IntEnum):
    """Kafka's ``TransactionState``: the value is the id written in the state log."""

    EMPTY = 0
    ONGOING = 1
    PREPARE_COMMIT = 2
    PREPARE_ABORT = 3
    COMPLETE_COMMIT = 4
    COMPLETE_ABORT = 5
    DEAD = 6
    PREPARE_EPOCH_FENCE = 7

    @property
    def kafka_name(self) -> str:
        """The name Kafka's admin APIs use ("PrepareCommit")."""
        return _NAMES[self]

    @classmethod
    def from_kafka_name(cls, name: str) -> TxnState | None:
        return _BY_NAME.get(name)

    @property
    def completing(self) -> bool:
        """Markers are being written: other requests for the id must wait."""
        return self in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT, TxnState.PREPARE_EPOCH_FENCE)

    @property
    def idle(self) -> bool:
        """No transaction is open: a new one may start, the id may expire."""
        return self in (TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT)


_NAMES = {
    TxnState.EMPTY: "Empty",
    TxnState.ONGOING: "Ongoing",
    TxnState.PREPARE_COMMIT: "PrepareCommit",
    TxnState.PREPARE_ABORT: "PrepareAbort",
    TxnState.COMPLETE_COMMIT: "CompleteCommit",
    TxnState.COMPLETE_ABORT: "CompleteAbort",
    TxnState.DEAD: "Dead",
    TxnState.PREPARE_EPOCH_FENCE: "PrepareEpochFence",
}
_BY_NAME = {name: state for state, name in _NAMES.items()}


class TxnEvent(Enum):
    INIT = "InitProducerId"  # a producer (re)starts with the id: epoch bumped
    ADD = "add partitions or offsets"  # the transaction grows (and starts, when none is open)
    END_COMMIT = "EndTxn commit"
    END_ABORT = "EndTxn abort"
    FENCE = "fence"  # an open transaction must be aborted under a bumped epoch (new instance, timeout)
    MARKERS_WRITTEN = "markers written"
    EXPIRE = "transactional.id.expiration.ms"


class IllegalTransition(Exception):  # noqa: N818 - a bug in the coordinator, named after what happened
    """An event the table has no row for in the current state."""


_IDLE = (TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT)

TRANSITIONS: dict[tuple[TxnState, TxnEvent], TxnState] = {
    **{(s, TxnEvent.INIT): TxnState.EMPTY for s in _IDLE},
    **{(s, TxnEvent.ADD): TxnState.ONGOING for s in (*_IDLE, TxnState.ONGOING)},
    **{(s, TxnEvent.EXPIRE): TxnState.DEAD for s in _IDLE},
    # transaction version 2: an abort with nothing added still ends a transaction (the client
    # may have begun one the broker never heard of) and bumps the epoch
    **{(s, TxnEvent.END_ABORT): TxnState.PREPARE_ABORT for s in _IDLE},
    (TxnState.ONGOING, TxnEvent.END_COMMIT): TxnState.PREPARE_COMMIT,
    (TxnState.ONGOING, TxnEvent.END_ABORT): TxnState.PREPARE_ABORT,
    (TxnState.ONGOING, TxnEvent.FENCE): TxnState.PREPARE_EPOCH_FENCE,
    (TxnState.PREPARE_EPOCH_FENCE, TxnEvent.END_ABORT): TxnState.PREPARE_ABORT,
    (TxnState.PREPARE_COMMIT, TxnEvent.MARKERS_WRITTEN): TxnState.COMPLETE_COMMIT,
    (TxnState.PREPARE_ABORT, TxnEvent.MARKERS_WRITTEN): TxnState.COMPLETE_ABORT,
}
"""(state, event) -> the next state; anything else is an :class:`IllegalTransition`."""


def transition(transactional_id: str, state: TxnState, event: TxnEvent) -> TxnState:
    target = TRANSITIONS.get((state, event))
    if target is None:
        raise IllegalTransition(
            f"transactional id {transactional_id!r}: {event.value} in state {state.kafka_name}"
        )
    return target
