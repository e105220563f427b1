"""The one table from the log's and the codec's exceptions to Kafka error codes (hmb.api.errors)."""

from __future__ import annotations

import errno
import logging

import pytest

from hmb.api.errors import ERROR_CODES, LOG_ERRORS, error_code, log_refusal
from hmb.log import errors as log_errors
from kproto import ApiKey, CorruptRecordError, ErrorCode
from kproto.records import RecordTooLargeError

PRODUCE, FETCH = ApiKey.PRODUCE, ApiKey.FETCH


@pytest.mark.parametrize(
    ("exc", "code"),
    [
        (CorruptRecordError("bad CRC"), ErrorCode.CORRUPT_MESSAGE),
        (log_errors.MagicNotAllowedError("v2 in Produce v2"), ErrorCode.CORRUPT_MESSAGE),
        (RecordTooLargeError(2000, 1000), ErrorCode.MESSAGE_TOO_LARGE),
        (log_errors.RecordListTooLargeError("big"), ErrorCode.RECORD_LIST_TOO_LARGE),
        (log_errors.OutOfOrderSequenceError("gap"), ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER),
        (log_errors.DuplicateSequenceError("dup"), ErrorCode.DUPLICATE_SEQUENCE_NUMBER),
        (log_errors.InvalidProducerEpochError("fenced"), ErrorCode.INVALID_PRODUCER_EPOCH),
        (log_errors.TransactionalBatchError("txn"), ErrorCode.INVALID_TXN_STATE),
        (log_errors.PartitionDeletedError("gone"), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
        (log_errors.OffsetOutOfRangeError("far"), ErrorCode.OFFSET_OUT_OF_RANGE),
    ],
)
def test_codes_that_do_not_depend_on_the_version(exc: Exception, code: ErrorCode) -> None:
    assert isinstance(exc, LOG_ERRORS)
    for version in range(9):
        assert error_code(exc, PRODUCE, version) == code


def test_a_failing_disk_is_a_storage_error_from_produce_v4_on() -> None:
    full = OSError(errno.ENOSPC, "No space left on device")
    assert [error_code(full, PRODUCE, v) for v in range(9)] == [ErrorCode.NOT_LEADER_OR_FOLLOWER] * 4 + [
        ErrorCode.KAFKA_STORAGE_ERROR
    ] * 5
    # a subclass of OSError takes the row of OSError
    assert error_code(PermissionError(errno.EACCES, "no"), PRODUCE, 3) == ErrorCode.NOT_LEADER_OR_FOLLOWER
    assert error_code(full, FETCH, 0) == ErrorCode.KAFKA_STORAGE_ERROR  # the rule is Produce's only


def test_every_exception_of_the_log_has_a_row() -> None:
    raised = [
        cls
        for cls in vars(log_errors).values()
        if isinstance(cls, type) and issubclass(cls, log_errors.LogError) and cls.__subclasses__() == []
    ]
    assert raised and all(cls in ERROR_CODES for cls in raised)


def test_unmapped_exceptions_are_a_bug_not_a_code() -> None:
    with pytest.raises(LookupError):
        error_code(ValueError("x"), PRODUCE, 0)


def test_refusals_are_logged_as_loud_as_their_row_says(caplog: pytest.LogCaptureFixture) -> None:
    log = logging.getLogger("test_api_errors")
    with caplog.at_level(logging.INFO, logger="test_api_errors"):
        log_refusal(log, OSError(errno.ENOSPC, "full"), "append to t-0", "peer:1")
        log_refusal(log, log_errors.OutOfOrderSequenceError("gap"), "append to t-0")
        log_refusal(log, RecordTooLargeError(2, 1), "append to t-0")  # not logged
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (logging.ERROR, "append to t-0 failed: [Errno 28] full (client peer:1)"),
        (logging.INFO, "append to t-0 failed: gap"),
    ]
