"""What the log refuses, in the log's own terms.

Rule of this module: these exceptions say what went wrong with records and
files, never which Kafka error code a client should see; the API layer
(:mod:`hmb.api.errors`) maps them to codes, per request version where Kafka's
codes differ.  The codec's own :class:`kproto.CorruptRecordError` and
:class:`kproto.records.RecordTooLargeError` pass through the log unchanged,
and ``OSError`` (a full or failing disk) too.
"""

from __future__ import annotations


class LogError(Exception):
    """Base of every refusal the log itself raises."""


class RecordListTooLargeError(LogError):
    """An append larger than a whole segment."""


class OffsetOutOfRangeError(LogError):
    """A fetch or seek outside ``[log_start_offset, high_watermark]``."""


class PartitionDeletedError(LogError):
    """The partition's topic was deleted while the request waited."""


class MagicNotAllowedError(LogError):
    """Records in a newer message format than the append accepts (its ``max_magic``)."""


class TransactionalBatchError(LogError):
    """A producer's non-transactional batch while its transaction is open on the partition."""


class KeylessRecordError(LogError):
    """A record without a key appended to a compacted topic: the whole append is refused."""


class ProducerSequenceError(LogError):
    """An idempotent producer's batch refused by its sequence state (see the subclasses)."""


class OutOfOrderSequenceError(ProducerSequenceError):
    """The batch's first sequence does not follow the producer's last one (a gap or overlap)."""


class DuplicateSequenceError(ProducerSequenceError):
    """A batch already in the log, sent again among new batches (it cannot be acknowledged alone)."""


class InvalidProducerEpochError(ProducerSequenceError):
    """A batch of an older producer epoch: the producer was fenced."""
