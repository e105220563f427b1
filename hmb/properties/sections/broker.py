"""The "Broker" settings: The broker's identity and where it keeps its data.

How to add one: see :mod:`hmb.properties.table`.
"""

from __future__ import annotations

from hmb.properties.model import (
    BOOLEAN,
    INT,
    Property,
    Synonym,
)

BROKER = "Broker"

PROPERTIES: tuple[Property, ...] = (
    Property(
        "node.id",
        INT,
        0,
        "The broker's id, as clients see it in Metadata; broker.id, its ZooKeeper-mode name, "
        "is the same setting. Alone hmb takes 0, where Kafka's -1 means no id has been given "
        "yet; in a cluster (zookeeper.connect) every broker needs its own.",
        BROKER,
        attr="node_id",
        synonyms=(Synonym("broker.id"),),
        kafka_default="-1",
    ),
    Property(
        "num.partitions",
        INT,
        1,
        "The partition count of a topic created without one (auto-created, or CreateTopics with -1).",
        BROKER,
        attr="num_partitions",
        at_least=1,
    ),
    Property(
        "auto.create.topics.enable",
        BOOLEAN,
        True,
        "Create a topic when a client asks for the metadata of one that does not exist.",
        BROKER,
        attr="auto_create_topics",
    ),
)
