"""What the transaction APIs share: the fenced-producer code per request version.

Rule: the coordinator (:mod:`hmb.txn.coordinator`) says PRODUCER_FENCED
for a request of an older epoch; a client of a request version older than
the one that introduced that code (KIP-588) is told INVALID_PRODUCER_EPOCH,
which it treats the same way, as Kafka does.
"""

from __future__ import annotations

from kproto import ApiKey, ErrorCode

PRODUCER_FENCED_SINCE = {
    ApiKey.INIT_PRODUCER_ID: 4,
    ApiKey.ADD_PARTITIONS_TO_TXN: 2,
    ApiKey.ADD_OFFSETS_TO_TXN: 2,
    ApiKey.END_TXN: 2,
}
"""The first version of each request that may be answered PRODUCER_FENCED."""


def for_version(code: int, api_key: ApiKey, version: int) -> int:
    """``code`` as a client of ``api_key`` at ``version`` understands it."""
    if code == ErrorCode.PRODUCER_FENCED and version < PRODUCER_FENCED_SINCE[api_key]:
        return int(ErrorCode.INVALID_PRODUCER_EPOCH)
    return int(code)
