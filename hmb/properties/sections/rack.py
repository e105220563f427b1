"""The "rAck" settings: how the broker records the receipts of acks = -2 (rAck) records.

How to add one: see :mod:`hmb.properties.table`.
"""

from __future__ import annotations

from hmb.properties.model import (
    INT,
    Property,
)

RACK = "rAck"

PROPERTIES: tuple[Property, ...] = (
    Property(
        "rack.receipts.ttl.ms",
        INT,
        600_000,
        "How long a receipt of a rAck record (Produce with acks = -2) lives: the TTL of its "
        "ZooKeeper znode in a cluster, the retention.ms of the __rack_receipts topic alone.",
        RACK,
        attr="rack_receipts_ttl_ms",
        at_least=1,
        unit="ms",
    ),
)
