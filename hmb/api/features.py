"""The feature levels this broker advertises in ApiVersions v3+ (KIP-584).

Kafka 4.x finalizes cluster-wide features whose level switches a protocol
on; a client reads them from ApiVersions and uses a protocol only when its
level is finalized.  One row per feature: the range of levels this broker
supports and the level it runs at.  Rule: a level is finalized here only
when every API version it makes clients send is served (``transaction.version``
2 is KIP-890 part 2: Produce v12, EndTxn v5, TxnOffsetCommit v5).  The
levels never change while a broker runs, so their epoch is a constant.
"""

from __future__ import annotations

from typing import Any, NamedTuple


class Feature(NamedTuple):
    min_level: int
    max_level: int
    finalized: int


FEATURES: dict[str, Feature] = {
    "transaction.version": Feature(0, 2, 2),
}
"""Feature name -> the levels supported and the one finalized."""

FINALIZED_EPOCH = 0
"""Above the -1 that means "no features known" to a client."""


def features_body() -> dict[str, Any]:
    """ApiVersions' feature fields (tagged, v3+; an older version leaves them out)."""
    return {
        "supported_features": [
            {"name": name, "min_version": f.min_level, "max_version": f.max_level}
            for name, f in FEATURES.items()
        ],
        "finalized_features_epoch": FINALIZED_EPOCH,
        "finalized_features": [
            {"name": name, "max_version_level": f.finalized, "min_version_level": f.finalized}
            for name, f in FEATURES.items()
        ],
    }
