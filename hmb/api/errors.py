"""The one table from the log's and the codec's exceptions to Kafka error codes.

Rules of this module:

* The log raises its own exceptions (:mod:`hmb.log.errors`), the codec its
  own (``kproto.CorruptRecordError``, ``kproto.records.RecordTooLargeError``),
  the disk ``OSError``; which code a client sees for each is decided here,
  and only here.  Handlers catch :data:`LOG_ERRORS` and ask :func:`error_code`.
* Where Kafka answers older request versions with another code (a client of
  that version would not know the newer one), the row says from which
  version of which request the code applies, and what older ones get.
* A row also says how loudly the broker logs the refusal: a client's bad
  input is worth an info line, a failing disk an error.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from hmb.log.errors import (
    DuplicateSequenceError,
    InvalidProducerEpochError,
    KeylessRecordError,
    MagicNotAllowedError,
    OffsetOutOfRangeError,
    OutOfOrderSequenceError,
    PartitionDeletedError,
    RecordListTooLargeError,
    TransactionalBatchError,
)
from kproto import ApiKey, CorruptRecordError, ErrorCode
from kproto.records import RecordTooLargeError


@dataclass(frozen=True)
class Mapping:
    """The code for one exception type, and the older versions that get another."""

    code: ErrorCode
    log_level: int | None = None  # None: the refusal is not logged
    # (api key, first version with ``code``, the code of the versions before it)
    older: tuple[tuple[ApiKey, int, ErrorCode], ...] = ()


ERROR_CODES: dict[type[BaseException], Mapping] = {
    CorruptRecordError: Mapping(ErrorCode.CORRUPT_MESSAGE, logging.INFO),
    # Produce v0-v2 may not carry RecordBatches: the clients of those versions
    # (and the consumers reading after them) predate the format.
    MagicNotAllowedError: Mapping(ErrorCode.CORRUPT_MESSAGE, logging.INFO),
    RecordTooLargeError: Mapping(ErrorCode.MESSAGE_TOO_LARGE),
    RecordListTooLargeError: Mapping(ErrorCode.RECORD_LIST_TOO_LARGE),
    OutOfOrderSequenceError: Mapping(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, logging.INFO),
    DuplicateSequenceError: Mapping(ErrorCode.DUPLICATE_SEQUENCE_NUMBER, logging.INFO),
    InvalidProducerEpochError: Mapping(ErrorCode.INVALID_PRODUCER_EPOCH, logging.INFO),
    TransactionalBatchError: Mapping(ErrorCode.INVALID_TXN_STATE, logging.INFO),
    KeylessRecordError: Mapping(ErrorCode.INVALID_RECORD, logging.INFO),
    PartitionDeletedError: Mapping(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
    OffsetOutOfRangeError: Mapping(ErrorCode.OFFSET_OUT_OF_RANGE),
    # A failing disk.  Produce clients before v4 do not know KAFKA_STORAGE_ERROR;
    # Kafka sends them NOT_LEADER_OR_FOLLOWER, which makes them refresh metadata and retry.
    OSError: Mapping(
        ErrorCode.KAFKA_STORAGE_ERROR,
        logging.ERROR,
        ((ApiKey.PRODUCE, 4, ErrorCode.NOT_LEADER_OR_FOLLOWER),),
    ),
}

#: What a handler catches around a call into the log: every type the table maps.
LOG_ERRORS: tuple[type[BaseException], ...] = tuple(ERROR_CODES)


def mapping_for(exc: BaseException) -> Mapping:
    """The table's row for ``exc`` (its own type's, else its nearest base class's)."""
    for cls in type(exc).__mro__:
        row = ERROR_CODES.get(cls)
        if row is not None:
            return row
    raise LookupError(f"no error code for {type(exc).__name__}") from exc


def error_code(exc: BaseException, api_key: int, version: int) -> int:
    """The code a client of ``api_key`` at ``version`` gets for ``exc`` (one of :data:`LOG_ERRORS`)."""
    row = mapping_for(exc)
    for key, since, before in row.older:
        if key == api_key and version < since:
            return int(before)
    return int(row.code)


def log_refusal(log: logging.Logger, exc: BaseException, action: str, peer: object = None) -> None:
    """Log "``action`` failed" at the level the row of ``exc`` says (``peer``: the client, if any)."""
    level = mapping_for(exc).log_level
    if level is not None:
        if peer is None:
            log.log(level, "%s failed: %s", action, exc)
        else:
            log.log(level, "%s failed: %s (client %s)", action, exc, peer)
