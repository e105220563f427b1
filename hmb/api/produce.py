"""Produce v0-v8: validate and append each partition's records, answer per partition.

Errors are per partition (Kafka's codes); one bad partition never fails the
others.  With ``acks == 0`` nothing is sent back, not even errors, as Kafka
does; the broker still logs them.

RecordBatches (magic 2) are accepted from v3, MessageSets (magic 0/1) in
every version (Kafka is as lenient: PROTOCOL.md trap 6).  An idempotent
producer's retry of a batch already in the log is answered with the
original offsets, not appended again; a gap in its sequence is
OUT_OF_ORDER_SEQUENCE_NUMBER (both decided by the log, see
:mod:`hmb.log.producer_state`).  Response fields of newer versions:
``log_append_time_ms`` -1 (v2+, CreateTime topics only), the partition's
``log_start_offset`` (v5+), no per-record errors (v8).
"""

from __future__ import annotations

import logging

from hmb.api.context import NO_RESPONSE, CloseConnection, Reply, RequestContext
from hmb.api.registry import handles
from hmb.log.partition import (
    PartitionDeletedError,
    PartitionLog,
    ProducerSequenceError,
    RecordListTooLargeError,
)
from kproto import ApiKey, CorruptRecordError, ErrorCode
from kproto.produce_fast import PartitionResult, encode_produce_response
from kproto.records import RecordTooLargeError

log = logging.getLogger(__name__)

_NONE = int(ErrorCode.NONE)  # a plain int: an enum member lookup costs a microsecond per request


async def _append_to(
    ctx: RequestContext, plog: PartitionLog, records: bytes | bytearray | None
) -> tuple[int, int]:
    topic, partition = plog.topic, plog.partition
    if not records:
        return _NONE, -1
    try:
        info = await plog.append(records, allow_v2=ctx.request.version >= 3)
    except RecordTooLargeError:
        return ErrorCode.MESSAGE_TOO_LARGE, -1
    except CorruptRecordError as exc:
        log.info("corrupt records for %s-%d from %s: %s", topic, partition, ctx.peer, exc)
        return ErrorCode.CORRUPT_MESSAGE, -1
    except RecordListTooLargeError:
        return ErrorCode.RECORD_LIST_TOO_LARGE, -1
    except ProducerSequenceError as exc:
        log.info("%s-%d from %s: %s", topic, partition, ctx.peer, exc)
        return exc.code, -1
    except PartitionDeletedError:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1
    except OSError as exc:
        log.error("append to %s-%d failed: %s", topic, partition, exc)
        # Produce < v4 clients do not know KAFKA_STORAGE_ERROR; Kafka sends them this one.
        code = ErrorCode.KAFKA_STORAGE_ERROR if ctx.request.version >= 4 else ErrorCode.NOT_LEADER_OR_FOLLOWER
        return code, -1
    return _NONE, info.base_offset


@handles(ApiKey.PRODUCE, versions=(0, 8))
async def handle(ctx: RequestContext) -> Reply:
    request = ctx.request
    body = request.body
    acks = body.acks
    valid_acks = acks in (0, 1, -1)
    logs = ctx.logs
    responses: list[tuple[str, list[PartitionResult]]] = []
    for topic in body.topic_data:
        partitions: list[PartitionResult] = []
        for pd in topic.partition_data:
            code: int
            start = -1
            if not valid_acks:
                code, base = ErrorCode.INVALID_REQUIRED_ACKS, -1
            elif (plog := logs.get(topic.name, pd.index)) is None:
                code, base = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1
            else:
                code, base = await _append_to(ctx, plog, pd.records)
                if code == _NONE:
                    start = plog.log_start_offset
            partitions.append((pd.index, code, base, start))
        responses.append((topic.name, partitions))
    if acks == 0:
        failed = [
            (name, index, ErrorCode(code).name)
            for name, partitions in responses
            for index, code, _base, _start in partitions
            if code
        ]
        if failed:
            # Kafka closes the socket: with acks=0 that is the producer's only sign of failure.
            raise CloseConnection(f"produce with acks=0 failed: {failed[:3]}")
        return NO_RESPONSE
    return encode_produce_response(request.version, request.correlation_id, responses)
