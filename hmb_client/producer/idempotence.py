"""The idempotent producer's bookkeeping: producer id, per-partition sequences, ordering.

With ``enable_idempotence`` every RecordBatch carries the producer id and
epoch from InitProducerId and a per-partition *base sequence*; the broker
appends a batch only if its sequence follows the last one it appended for
that producer and partition, and answers a resent batch it already has with
its original offset.  So a retry after a lost answer does not duplicate
records -- provided the retry carries the same id, epoch and sequence (the
batch keeps its encoded bytes, see :mod:`hmb_client.producer.batches`) and a
partition's batches reach the broker in sequence order.

The rules, after the Java client's ``TransactionManager``:

* Sequences are assigned when a batch is first sent, in the order batches
  were filled; at most 5 requests are in flight per connection (the broker
  remembers the last 5 batches per producer and partition).
* A partition with a batch waiting to be retried sends nothing else until
  that batch is in flight alone and answered: retries go out one at a time,
  lowest sequence first, and batches sent behind a failed one (which the
  broker answers OUT_OF_ORDER_SEQUENCE_NUMBER) are retried after it.
* OUT_OF_ORDER_SEQUENCE_NUMBER for the partition's oldest unanswered batch,
  and UNKNOWN_PRODUCER_ID (the broker lost the producer's state, e.g. after
  retention removed its records), both mean the broker did *not* append the
  batch and will not accept the sequence that follows.  The partition then
  moves to a fresh producer id (InitProducerId again, as a new producer:
  this client does not bump epochs as KIP-360 allows) and its unanswered
  batches are re-sequenced from 0 and resent -- safe, since the broker
  appends none past a gap.  This is what the Java
  client does for non-transactional producers on brokers before 2.5.
* DUPLICATE_SEQUENCE_NUMBER means the broker has the batch already: success
  (offset unknown, -1).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from hmb_client.connection import BrokerConnection
from hmb_client.errors import error_for
from hmb_client.producer.batches import ProducerBatch
from kproto import ApiKey, ErrorCode

log = logging.getLogger(__name__)

MAX_IN_FLIGHT = 5  # the broker's per-producer, per-partition batch memory
_SEQUENCE_LIMIT = 1 << 31  # sequences wrap to 0 after INT32_MAX, as in Kafka
TRANSACTION_TIMEOUT_MS = 60_000  # InitProducerId wants one; only transactions use it

RETRY = "retry"
SUCCESS = "success"
FAIL = "fail"


@dataclass
class _PartitionState:
    producer_id: int
    producer_epoch: int
    next_sequence: int = 0
    unanswered: list[ProducerBatch] = field(default_factory=list)  # sent, not finished; order kept
    in_flight: int = 0
    needs_new_id: bool = False


class Idempotence:
    """Producer id and sequences of one idempotent producer (used in its I/O thread only)."""

    def __init__(self) -> None:
        self.producer_id = -1
        self.producer_epoch = -1
        self.new_id_wanted = True
        self._partitions: dict[tuple[str, int], _PartitionState] = {}

    @property
    def has_id(self) -> bool:
        return self.producer_id >= 0 and not self.new_id_wanted

    async def init_producer_id(self, conn: BrokerConnection) -> None:
        """InitProducerId (no transactional id); raises the broker's error."""
        version = conn.pick(ApiKey.INIT_PRODUCER_ID)
        body = await conn.request(
            ApiKey.INIT_PRODUCER_ID,
            version,
            {
                "transactional_id": None,
                "transaction_timeout_ms": TRANSACTION_TIMEOUT_MS,
                "producer_id": -1,  # v3+: a new producer, not an epoch bump
                "producer_epoch": -1,
            },
        )
        if body.error_code:
            raise error_for(body.error_code)("InitProducerId for the idempotent producer")
        self.producer_id, self.producer_epoch = body.producer_id, body.producer_epoch
        self.new_id_wanted = False
        log.debug("producer id %d epoch %d", self.producer_id, self.producer_epoch)

    def adopt(self, producer_id: int, producer_epoch: int) -> None:
        """Take the id and epoch a transactional InitProducerId returned: every partition's
        sequences start again at 0 (a new epoch), as the broker expects."""
        self.producer_id, self.producer_epoch = producer_id, producer_epoch
        self.new_id_wanted = False
        self._partitions = {tp: st for tp, st in self._partitions.items() if st.unanswered}
        for st in self._partitions.values():
            st.needs_new_id = True

    def _state(self, tp: tuple[str, int]) -> _PartitionState:
        st = self._partitions.get(tp)
        if st is None:
            st = self._partitions[tp] = _PartitionState(self.producer_id, self.producer_epoch)
        return st

    def select(self, batches: list[ProducerBatch]) -> tuple[list[ProducerBatch], list[ProducerBatch]]:
        """Split drained batches into (send now, hold back), stamping those sent first.

        Needs :attr:`has_id`.  Order within a partition follows the order the
        batches were filled in.
        """
        by_tp: dict[tuple[str, int], list[ProducerBatch]] = {}
        for b in batches:
            by_tp.setdefault(b.tp, []).append(b)
        send: list[ProducerBatch] = []
        hold: list[ProducerBatch] = []
        for tp, group in by_tp.items():
            group.sort(key=_order_of)
            st = self._state(tp)
            if st.needs_new_id or (st.producer_id != self.producer_id and not st.unanswered):
                if st.in_flight:
                    hold.extend(group)  # wait for the old id's answers before switching
                    continue
                self._switch(st)
            waiting = len(st.unanswered) - st.in_flight
            if waiting:  # a retry is pending: it goes alone, lowest sequence first
                first = group[0]
                if st.in_flight or first is not st.unanswered[0]:
                    hold.extend(group)
                    continue
                self._stamp(st, first)
                send.append(first)
                hold.extend(group[1:])
                continue
            for b in group:
                self._stamp(st, b)
            send.extend(group)
        return send, hold

    def _switch(self, st: _PartitionState) -> None:
        """Move a partition to the current producer id; its unanswered batches are re-sequenced."""
        st.producer_id, st.producer_epoch = self.producer_id, self.producer_epoch
        st.next_sequence = 0
        st.needs_new_id = False
        for b in st.unanswered:
            b.stamp(-1, -1, -1)

    def _stamp(self, st: _PartitionState, batch: ProducerBatch) -> None:
        if batch.base_sequence < 0:
            batch.stamp(st.producer_id, st.producer_epoch, st.next_sequence)
            st.next_sequence = (st.next_sequence + len(batch)) % _SEQUENCE_LIMIT
            if batch not in st.unanswered:
                st.unanswered.append(batch)
                st.unanswered.sort(key=_order_of)
        st.in_flight += 1

    def may_write(self, batch: ProducerBatch) -> bool:
        """Whether ``batch`` (selected, counted in flight) may still go on the wire: not
        while an earlier batch of its partition waits for a retry (its fate unknown)."""
        st = self._partitions.get(batch.tp)
        if st is None or not st.unanswered or batch is st.unanswered[0]:
            return True
        waiting = len(st.unanswered) - st.in_flight  # unanswered and not on the wire
        return waiting <= 0

    def not_sent(self, batch: ProducerBatch) -> None:
        """A selected batch could not be written (no connection): it is waiting again."""
        st = self._partitions.get(batch.tp)
        if st is not None and st.in_flight:
            st.in_flight -= 1

    def answered(self, batch: ProducerBatch, code: int) -> str:
        """What to do with a batch the broker answered ``code`` for: RETRY, SUCCESS or FAIL.

        FAIL is for the caller's own judgement (a non-retriable error); the
        sequence-specific codes are decided here.
        """
        st = self._partitions.get(batch.tp)
        if st is None or batch not in st.unanswered:
            return FAIL if code else SUCCESS
        st.in_flight = max(0, st.in_flight - 1)
        if code in (ErrorCode.NONE, ErrorCode.DUPLICATE_SEQUENCE_NUMBER):
            st.unanswered.remove(batch)
            return SUCCESS
        if code in (ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, ErrorCode.UNKNOWN_PRODUCER_ID):
            if code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER and batch is not st.unanswered[0]:
                return RETRY  # an earlier batch failed first: this one follows it
            if batch.producer_id == st.producer_id:
                log.warning(
                    "%s for %s-%d (sequence %d): moving the partition to a new producer id",
                    ErrorCode.of(code).name,
                    batch.topic,
                    batch.partition,
                    batch.base_sequence,
                )
                st.needs_new_id = True
                self.new_id_wanted = True
            return RETRY
        return RETRY if error_for(code).retriable else FAIL

    def connection_lost(self, batch: ProducerBatch) -> None:
        """The request carrying ``batch`` got no answer: its fate is unknown, it is retried as is."""
        st = self._partitions.get(batch.tp)
        if st is not None and batch in st.unanswered:
            st.in_flight = max(0, st.in_flight - 1)

    def finished(self, batch: ProducerBatch) -> None:
        """``batch`` failed for good: forget it (a later batch's OUT_OF_ORDER answer moves the
        partition to a new producer id if the broker never got this one)."""
        st = self._partitions.get(batch.tp)
        if st is not None and batch in st.unanswered:
            st.unanswered.remove(batch)


def _order_of(batch: ProducerBatch) -> int:
    return batch.order
