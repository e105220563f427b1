"""Produce v0-v13: validate and append each partition's records, answer per partition.

Errors are per partition (Kafka's codes); one bad partition never fails the
others.  With ``acks == 0`` nothing is sent back, not even errors, as Kafka
does; the broker still logs them.

RecordBatches (magic 2) are accepted from v3, MessageSets (magic 0/1) in
every version: Kafka is as lenient, and real clients do send magic 1
inside Produce v0.  An idempotent producer's retry of a batch already in
the log is answered with the original offsets, not appended again; a gap
in its sequence is OUT_OF_ORDER_SEQUENCE_NUMBER (both decided by the log,
see :mod:`hmb.log.producer_state`).  Which code a refusal of the log gets
is :mod:`hmb.api.errors`' table.  Response fields of newer versions:
``log_append_time_ms`` -1 (v2+, CreateTime topics only), the partition's
``log_start_offset`` (v5+), no per-record errors (v8).  A transactional
batch must go to a partition of its open transaction
(:mod:`hmb.api.txn_produce`), INVALID_TXN_STATE otherwise, at every version.
``acks == -2`` is rAck (:mod:`hmb.api.rack`): no answer, as acks = 0, and a
receipt per record appended.

Flexible versions: v9 is v8 in the compact layout; v10 adds the tagged
``current_leader``/``node_endpoints`` that point a client at a new leader
after NOT_LEADER_OR_FOLLOWER, which a single broker leading every partition
never answers (left out, as Kafka leaves a default tagged field out); v11
allows TRANSACTION_ABORTABLE, an error of transactions.  v12 lets a
transactional producer write to a partition it has not added to its
transaction: the broker adds it (KIP-890 part 2, :mod:`hmb.api.txn_produce`).
v13 names topics by id (:mod:`hmb.api.produce_by_id`).

``acks=all`` (-1) in a cluster waits for the in-sync replicas, after every
partition of the request is appended (:mod:`hmb.replication.acks`:
NOT_ENOUGH_REPLICAS before, NOT_ENOUGH_REPLICAS_AFTER_APPEND after,
REQUEST_TIMED_OUT past ``timeout_ms``).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import trio

from hmb.api.authz import allowed, topics_allowed
from hmb.api.context import NO_RESPONSE, CloseConnection, Reply, RequestContext
from hmb.api.errors import LOG_ERRORS, error_code, log_refusal
from hmb.api.leadership import misdirected
from hmb.api.produce_by_id import topic_keys, topic_names
from hmb.api.rack import RACK_ACKS, receipt_lines, receipts
from hmb.api.registry import handles
from hmb.api.txn_produce import refusal as txn_refusal
from hmb.log.partition import PartitionLog
from hmb.replication import acks as acks_all
from hmb.security.acl import Operation, ResourceType
from kproto import ApiKey, ErrorCode
from kproto.produce_fast import PartitionResult, encode_produce_response

if TYPE_CHECKING:
    from hmb.replication.roles import Replication

log = logging.getLogger(__name__)

_NONE = int(ErrorCode.NONE)  # a plain int: an enum member lookup costs a microsecond per request


def _max_magic(version: int) -> int:
    """The newest message format a Produce request of ``version`` may carry.

    RecordBatches (magic 2) need v3: the clients of older versions, and the
    consumers reading after them, predate the format.
    """
    return 2 if version >= 3 else 1


async def _append_to(
    ctx: RequestContext,
    plog: PartitionLog,
    records: bytes | bytearray | None,
    messages: dict[tuple[str, int], str],
) -> tuple[int, int, int, int]:
    """(error code, base offset, log append time or -1, last offset) of one partition's append;
    an INVALID_RECORD refusal also says why in ``messages`` (v8's error_message)."""
    if not records:
        return _NONE, -1, -1, -1
    version = ctx.request.version
    try:
        info = await plog.append(records, max_magic=_max_magic(version))
    except LOG_ERRORS as exc:
        log_refusal(log, exc, f"append to {plog.topic}-{plog.partition}", ctx.peer)
        code = error_code(exc, ApiKey.PRODUCE, version)
        if code == ErrorCode.INVALID_RECORD:
            messages[(plog.topic, plog.partition)] = str(exc)
        return code, -1, -1, -1
    return _NONE, info.base_offset, info.log_append_time, info.last_offset


def _denied(ctx: RequestContext, topics: list[str | None]) -> dict[str, int]:
    """The topics this connection may not write, each with its error (Write on the
    topic; for a transactional produce, Write on its transactional id first)."""
    if ctx.services.authorizer is None:
        return {}
    body = ctx.request.body
    names = {name for name in topics if name is not None}
    tid = getattr(body, "transactional_id", None)
    if tid is not None and not allowed(ctx, Operation.WRITE, ResourceType.TRANSACTIONAL_ID, tid):
        return dict.fromkeys(names, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    writable = topics_allowed(ctx, Operation.WRITE, names)
    return dict.fromkeys(names - writable, ErrorCode.TOPIC_AUTHORIZATION_FAILED)


_OUTCOME_CODES = {
    acks_all.Outcome.REPLICATED: _NONE,
    acks_all.Outcome.TOO_FEW_AFTER: int(ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND),
    acks_all.Outcome.TIMED_OUT: int(ErrorCode.REQUEST_TIMED_OUT),
    acks_all.Outcome.NOT_LEADER: int(ErrorCode.NOT_LEADER_OR_FOLLOWER),
}


async def _await_replicas(
    replication: Replication,
    waiting: list[tuple[list[PartitionResult], int, PartitionLog, int]],
    timeout_ms: int,
) -> None:
    """acks=all in a cluster: hold each appended partition's answer until the in-sync replicas
    have it (:mod:`hmb.replication.acks`), all within the request's ``timeout_ms``."""
    deadline = trio.current_time() + max(timeout_ms, 0) / 1000
    for partitions, i, plog, last in waiting:
        outcome = await acks_all.replicated(replication, plog, last, deadline)
        if outcome is not acks_all.Outcome.REPLICATED:
            index, _code, base, start = partitions[i]
            partitions[i] = (index, _OUTCOME_CODES[outcome], base, start)


@handles(ApiKey.PRODUCE, versions=(0, 13))
async def handle(ctx: RequestContext) -> Reply:
    request = ctx.request
    body = request.body
    acks = body.acks
    valid_acks = acks in (0, 1, -1, RACK_ACKS)
    rack = acks == RACK_ACKS
    logs = ctx.logs
    names = topic_names(ctx)
    denied = _denied(ctx, names)
    keys = topic_keys(ctx, names)
    responses: list[tuple[str | bytes, list[PartitionResult]]] = []
    append_times: dict[tuple[str | bytes, int], int] = {}  # LogAppendTime topics' stamps, for v2+ answers
    messages: dict[tuple[str, int], str] = {}  # why a partition's records were invalid, for v8
    replication = (
        ctx.services.cluster.replication if ctx.services.cluster is not None and acks == -1 else None
    )
    waiting: list[tuple[list[PartitionResult], int, PartitionLog, int]] = []  # acks=all, replicated
    for topic, name, key in zip(body.topic_data, names, keys, strict=True):
        partitions: list[PartitionResult] = []
        for pd in topic.partition_data:
            code: int
            start = -1
            if not valid_acks:
                code, base = ErrorCode.INVALID_REQUIRED_ACKS, -1
            elif name is None:
                code, base = ErrorCode.UNKNOWN_TOPIC_ID, -1
            elif denied and name in denied:
                code, base = denied[name], -1
            elif misdirected(ctx, name, pd.index):
                code, base = ErrorCode.NOT_LEADER_OR_FOLLOWER, -1
            elif (plog := logs.get(name, pd.index)) is None:
                code, base = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1
            elif pd.records and (refused := await txn_refusal(ctx, name, pd.index, pd.records)):
                code, base = refused, -1
            elif replication is not None and acks_all.too_few_in_sync(replication, plog):
                code, base = ErrorCode.NOT_ENOUGH_REPLICAS, -1
            else:
                taken = receipt_lines(request.client_id or "", name, pd.records) if rack else None
                code, base, append_time, last = await _append_to(ctx, plog, pd.records, messages)
                if code == _NONE:
                    start = plog.log_start_offset
                    if append_time >= 0:
                        append_times[(key, pd.index)] = append_time
                    if taken:
                        await receipts(ctx).publish(request.client_id or "", name, taken)
                    if replication is not None and last >= 0:
                        waiting.append((partitions, len(partitions), plog, last))
            partitions.append((pd.index, code, base, start))
        responses.append((key, partitions))
    if waiting and replication is not None:
        await _await_replicas(replication, waiting, body.timeout_ms)
    if acks == 0 or rack:
        failed = [
            (key, index, ErrorCode(code).name)
            for key, partitions in responses
            for index, code, _base, _start in partitions
            if code
        ]
        if failed:
            # Kafka closes the socket: with acks=0 that is the producer's only sign of failure.
            raise CloseConnection(f"produce with acks={acks} failed: {failed[:3]}")
        return NO_RESPONSE
    return encode_produce_response(
        request.version,
        request.correlation_id,
        responses,
        log_append_times=append_times,
        error_messages=messages,
    )
