"""The transactional producer's side of Kafka's transactions (the Java client's TransactionManager, in small).

With ``transactional_id`` the producer is idempotent and its batches are
transactional: they become visible to read_committed consumers only when
the transaction commits.  The calls and their order are Kafka's::

    init_transactions()            FindCoordinator(transaction), InitProducerId(transactional id)
    begin_transaction()            local only
      send(...)                    AddPartitionsToTxn before a partition's first batch, then Produce
      send_offsets_to_transaction  AddOffsetsToTxn, then TxnOffsetCommit to the group's coordinator
    commit_transaction()           flush, then EndTxn(commit)   (or abort_transaction: EndTxn(abort))

Rules:

* Coordinator errors that say "try again" (COORDINATOR_NOT_AVAILABLE,
  NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, CONCURRENT_TRANSACTIONS)
  and a lost connection to the coordinator are retried with a backoff
  until ``max_block_ms``; the coordinator is looked up again after all but
  the last two.
* PRODUCER_FENCED / INVALID_PRODUCER_EPOCH mean another instance took
  the transactional id over: fatal, the producer must be closed
  (:class:`ProducerFencedError`).  Any other error leaves the transaction
  to be aborted (``abort_transaction``).
* A record of the open transaction that was not delivered (its batch
  failed) forbids the commit: ``commit_transaction`` raises
  :class:`TransactionAbortableError` without ending the transaction, so
  that a commit never makes a transaction visible with a record missing.
* A transaction that wrote nothing ends without an EndTxn, as in Kafka.
* Transaction version 2 (KIP-890 part 2), when the coordinator finalizes
  ``transaction.version`` 2 and serves EndTxn v5: no AddPartitionsToTxn or
  AddOffsetsToTxn (the first Produce v12+ or TxnOffsetCommit v5 adds them;
  Produce v13, topics by id, is the same protocol, and a request falls back
  to v12 when a topic id is unknown: still version 2),
  and every EndTxn answers the producer id and epoch the next transaction
  uses (its sequences start again at 0).  Otherwise the versions stay at
  the first protocol's (Produce v11, EndTxn and TxnOffsetCommit v4), as the
  Java client does.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping
from typing import Any

import trio

from hmb_client.cluster import Cluster
from hmb_client.connection import BrokerConnection
from hmb_client.errors import (
    IllegalStateError,
    KafkaConnectionError,
    KafkaError,
    KafkaTimeoutError,
    error_for,
)
from hmb_client.producer.idempotence import Idempotence
from hmb_client.runtime import IoThread
from hmb_client.structs import OffsetAndMetadata
from kproto import ApiKey, ErrorCode

log = logging.getLogger(__name__)

KEY_TYPE_TRANSACTION = 1
_FIND_AGAIN = {ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR}
_RETRY = _FIND_AGAIN | {ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.CONCURRENT_TRANSACTIONS}
_FENCED = {ErrorCode.PRODUCER_FENCED, ErrorCode.INVALID_PRODUCER_EPOCH}
_BACKOFF_S = 0.02
_RECONNECT_BACKOFF_S = 0.1
TRANSACTION_VERSION_2 = 2
#: the newest versions of the first transaction protocol (KIP-890 part 2 starts after them)
V1_LAST: dict[int, int] = {ApiKey.PRODUCE: 11, ApiKey.END_TXN: 4, ApiKey.TXN_OFFSET_COMMIT: 4}


class ProducerFencedError(KafkaError):
    """Another producer instance with the same transactional id has taken over."""


class TransactionAbortableError(KafkaError):
    """A record of the open transaction was not delivered: the transaction cannot commit.

    Abort it (``abort_transaction``) and send its records again in a new one,
    as with Java's client, whose commit fails the same way once a send of the
    transaction has failed.
    """


def transaction_manager(config: Any, idempotence: Idempotence | None) -> TransactionManager | None:
    """The producer's transaction manager: None without ``transactional_id``."""
    if config.transactional_id is None:
        return None
    assert idempotence is not None  # the config demands idempotence with a transactional id
    return TransactionManager(
        config.transactional_id, config.transaction_timeout_ms, idempotence, config.max_block_ms
    )


class TransactionManager:
    """One transactional id's state in the producer (used in its I/O thread)."""

    def __init__(self, transactional_id: str, timeout_ms: int, idempotence: Idempotence, max_block_ms: int):
        self.transactional_id = transactional_id
        self.timeout_ms = timeout_ms
        self.idempotence = idempotence
        self.max_block_s = max_block_ms / 1000
        self.initialized = False
        self.in_transaction = False
        self.fenced = False
        self.added: set[tuple[str, int]] = set()  # partitions in this transaction
        self.offsets_added = False
        #: transaction version 2 (known once the coordinator is found at init)
        self.version_2 = False
        #: the first send of the open transaction that failed: it may not commit
        self.send_error: BaseException | None = None
        self._coordinator: BrokerConnection | None = None

    # ---------------------------------------------------------------- coordinator requests

    async def _find(self, cluster: Cluster) -> BrokerConnection:
        if self._coordinator is None:
            conn = await cluster.any_connection()
            body = {"key": self.transactional_id, "key_type": KEY_TYPE_TRANSACTION}
            found = await conn.request(
                ApiKey.FIND_COORDINATOR, conn.pick(ApiKey.FIND_COORDINATOR, (1, 2)), body
            )
            if found.error_code:
                raise error_for(found.error_code)(f"no transaction coordinator for {self.transactional_id!r}")
            cluster.nodes.setdefault(found.node_id, (found.host, found.port))
            self._coordinator = await cluster.connection(found.node_id)
        return self._coordinator

    async def _call(
        self,
        cluster: Cluster,
        api_key: ApiKey,
        body: dict[str, Any],
        codes_of: Any = None,
        to_group: str = "",
    ) -> Any:
        """Send ``body`` to the coordinator, retrying "try again" answers; raise any other error."""
        deadline = time.monotonic() + self.max_block_s
        while True:
            try:
                conn = await cluster.coordinator(to_group) if to_group else await self._find(cluster)
                resp = await conn.request(api_key, self.version_of(conn, api_key), body)
            except (KafkaConnectionError, KafkaTimeoutError) as exc:  # the coordinator went away
                self._coordinator = None
                if time.monotonic() > deadline:
                    raise
                log.debug("%s for %s: %s; retrying", ApiKey(api_key).name, self.transactional_id, exc)
                await trio.sleep(_RECONNECT_BACKOFF_S)
                continue
            except KafkaError as exc:  # no coordinator yet (its state topic is being made, or moves)
                if not exc.retriable or time.monotonic() > deadline:
                    raise
                log.debug("finding the coordinator of %s: %s; retrying", self.transactional_id, exc)
                await trio.sleep(_BACKOFF_S)
                continue
            codes = list(codes_of(resp)) if codes_of is not None else [resp.error_code]
            bad = [c for c in codes if c]
            if not bad:
                return resp
            code = bad[0]
            if code in _FENCED:
                self.fenced = True
                raise ProducerFencedError(f"{ApiKey(api_key).name}: {ErrorCode.of(code).name}: fenced")
            if code not in _RETRY or time.monotonic() > deadline:
                raise error_for(code)(f"{ApiKey(api_key).name} for {self.transactional_id!r}")
            if code in _FIND_AGAIN:
                self._coordinator = None
            await trio.sleep(_BACKOFF_S)

    def version_of(self, conn: BrokerConnection, api_key: int) -> int:
        """The version of ``api_key`` to send: the newest, or the first protocol's last."""
        version = conn.pick(api_key)
        last = V1_LAST.get(api_key)
        return version if last is None or self.version_2 else min(version, last)

    def _ids(self) -> dict[str, Any]:
        idem = self.idempotence
        return {
            "transactional_id": self.transactional_id,
            "producer_id": idem.producer_id,
            "producer_epoch": idem.producer_epoch,
        }

    # ---------------------------------------------------------------- the calls

    async def init(self, cluster: Cluster) -> None:
        body = {
            "transactional_id": self.transactional_id,
            "transaction_timeout_ms": self.timeout_ms,
            "producer_id": -1,
            "producer_epoch": -1,
        }
        resp = await self._call(cluster, ApiKey.INIT_PRODUCER_ID, body)
        self.idempotence.adopt(resp.producer_id, resp.producer_epoch)
        conn = await self._find(cluster)
        self.version_2 = (
            conn.features.get("transaction.version", 0) >= TRANSACTION_VERSION_2
            and conn.pick(ApiKey.END_TXN) > V1_LAST[ApiKey.END_TXN]
        )
        self.initialized = True

    def begin(self) -> None:
        if self.fenced:
            raise ProducerFencedError("the producer was fenced: close it")
        if not self.initialized:
            raise IllegalStateError("call init_transactions() before begin_transaction()")
        if self.in_transaction:
            raise IllegalStateError("a transaction is already open")
        self.in_transaction = True
        self.added.clear()
        self.offsets_added = False
        self.send_error = None

    def send_failed(self, error: BaseException) -> None:
        """A record of the open transaction was not delivered (called as its batch fails)."""
        if self.in_transaction and self.send_error is None:
            self.send_error = error

    def check_open(self) -> None:
        if not self.in_transaction:
            raise IllegalStateError("a transactional producer sends inside begin_transaction() .. commit")

    async def add_partitions(self, cluster: Cluster, tps: Iterable[tuple[str, int]]) -> None:
        """AddPartitionsToTxn for the partitions not in the transaction yet."""
        new = sorted(set(tps) - self.added)
        if not new:
            return
        if self.version_2:  # the first Produce v12+ to each adds it
            self.added.update(new)
            return
        topics: dict[str, list[int]] = {}
        for topic, partition in new:
            topics.setdefault(topic, []).append(partition)
        body = {
            **{f"v3_and_below_{k}": v for k, v in self._ids().items()},
            "v3_and_below_topics": [{"name": t, "partitions": ps} for t, ps in topics.items()],
        }

        def codes(resp: Any) -> Iterable[int]:
            return (
                p.partition_error_code
                for t in resp.results_by_topic_v3_and_below
                for p in t.results_by_partition
            )

        await self._call(cluster, ApiKey.ADD_PARTITIONS_TO_TXN, body, codes)
        self.added.update(new)

    async def send_offsets(
        self, cluster: Cluster, offsets: Mapping[tuple[str, int], int | OffsetAndMetadata], group_id: str
    ) -> None:
        self.check_open()
        if not self.version_2:  # else TxnOffsetCommit v5 adds the group itself
            await self._call(cluster, ApiKey.ADD_OFFSETS_TO_TXN, {**self._ids(), "group_id": group_id})
        self.offsets_added = True
        topics: dict[str, list[dict[str, Any]]] = {}
        for (topic, partition), value in offsets.items():
            om = value if isinstance(value, OffsetAndMetadata) else OffsetAndMetadata(int(value))
            topics.setdefault(topic, []).append(
                {
                    "partition_index": partition,
                    "committed_offset": om.offset,
                    "committed_leader_epoch": -1,
                    "committed_metadata": om.metadata,
                }
            )
        body = {
            **self._ids(),
            "group_id": group_id,
            "generation_id": -1,
            "member_id": "",
            "group_instance_id": None,
            "topics": [{"name": t, "partitions": ps} for t, ps in topics.items()],
        }

        def codes(resp: Any) -> Iterable[int]:
            return (p.error_code for t in resp.topics for p in t.partitions)

        await self._call(cluster, ApiKey.TXN_OFFSET_COMMIT, body, codes, to_group=group_id)

    async def end(self, cluster: Cluster, commit: bool) -> None:
        """EndTxn (skipped when the transaction wrote nothing).  A failed commit leaves the
        transaction open, for ``abort_transaction``."""
        if not self.in_transaction:
            raise IllegalStateError("no transaction is open")
        if commit and self.send_error is not None:
            raise TransactionAbortableError(
                f"a record of the transaction of {self.transactional_id!r} was not delivered "
                f"({self.send_error}): abort the transaction and send its records again"
            ) from self.send_error
        if self.added or self.offsets_added:
            resp = await self._call(cluster, ApiKey.END_TXN, {**self._ids(), "committed": commit})
            if self.version_2:  # every transaction has its epoch: the next one's is answered
                self.idempotence.adopt(resp.producer_id, resp.producer_epoch)
        self.in_transaction = False
        self.added.clear()
        self.offsets_added = False
        self.send_error = None


class TransactionCalls:
    """The producer's transaction methods (names as kafka-python's and confluent-kafka's).

    Mixed into :class:`hmb_client.producer.producer.Producer`, whose I/O
    thread runs the requests; kept here beside the manager they drive.
    """

    _txn: TransactionManager | None
    _io: IoThread
    _cluster: Cluster

    def flush(self, timeout: float | None = None) -> None:
        raise NotImplementedError

    def _transactional(self) -> TransactionManager:
        if self._txn is None:
            raise IllegalStateError("transactions need the transactional_id setting")
        return self._txn

    def init_transactions(self) -> None:
        """Register the transactional id, fencing any older instance; once, before the first transaction."""
        self._io.run(self._transactional().init, self._cluster)

    def begin_transaction(self) -> None:
        self._transactional().begin()

    def send_offsets_to_transaction(self, offsets: Mapping[tuple[str, int], Any], group_id: Any) -> None:
        """Commit a consumer group's ``offsets`` ({(topic, partition): offset}) with the transaction."""
        group = getattr(group_id, "group_id", group_id)  # a consumer's group metadata, or the id
        self._io.run(self._transactional().send_offsets, self._cluster, offsets, group)

    def commit_transaction(self) -> None:
        """Flush, then commit: the records become visible to read_committed consumers."""
        txn = self._transactional()
        self.flush(txn.max_block_s)
        self._io.run(txn.end, self._cluster, True)

    def abort_transaction(self) -> None:
        """Flush, then abort: read_committed consumers never see the transaction's records."""
        txn = self._transactional()
        self.flush(txn.max_block_s)
        self._io.run(txn.end, self._cluster, False)
