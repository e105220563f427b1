"""The "Consumer groups" settings: Group membership, rebalances and committed offsets.

How to add one: see :mod:`hmb.properties.table`.
"""

from __future__ import annotations

from hmb.properties.model import (
    INT,
    Property,
)

GROUPS = "Consumer groups"

PROPERTIES: tuple[Property, ...] = (
    Property(
        "offset.metadata.max.bytes",
        INT,
        4096,
        "The longest metadata string a consumer may commit with an offset.",
        GROUPS,
        attr="offset_metadata_max_bytes",
        unit="bytes",
    ),
    Property(
        "offsets.commit.timeout.ms",
        INT,
        5000,
        "In a cluster, how long an offset commit waits for every in-sync replica of its "
        "__consumer_offsets partition to hold it before the commit is answered "
        "COORDINATOR_NOT_AVAILABLE (the client commits again).",
        GROUPS,
        attr="offsets_commit_timeout_ms",
        at_least=1,
        unit="ms",
    ),
    Property(
        "group.min.session.timeout.ms",
        INT,
        6000,
        "The shortest session timeout a consumer may join a group with.",
        GROUPS,
        attr="group_min_session_timeout_ms",
        at_least=0,
        unit="ms",
    ),
    Property(
        "group.max.session.timeout.ms",
        INT,
        1_800_000,
        "The longest session timeout a consumer may join a group with.",
        GROUPS,
        attr="group_max_session_timeout_ms",
        unit="ms",
    ),
    Property(
        "group.initial.rebalance.delay.ms",
        INT,
        0,
        "How long a new group waits for more members before its first assignment. Kafka "
        "waits 3 s; without the wait a consumer gets its partitions in well under a second.",
        GROUPS,
        attr="group_initial_rebalance_delay_ms",
        at_least=0,
        unit="ms",
        kafka_default="3000",
    ),
)
