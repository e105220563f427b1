"""Kafka's ZooKeeper layout: every znode path the cluster uses and the JSON each one holds.

The paths and formats are Kafka's (ZooKeeper mode, 2.x-3.x), so the tree
reads as the one the Kafka papers describe and Kafka's tools recognise it:

================================================  =========  ============================================
path                                              kind       written by
================================================  =========  ============================================
/cluster/id                                       persistent the first broker; the others adopt it
/brokers/ids/<id>                                 ephemeral  each broker, for its own session
/controller                                       ephemeral  the broker that won the election
/controller_epoch                                 persistent each new controller, +1 (conditional set)
/brokers/topics/<topic>                           persistent the broker that received CreateTopics
/brokers/topics/<topic>/partitions/<p>/state      persistent the controller only
/config/topics/<topic>                            persistent the broker that received CreateTopics
/admin/delete_topics/<topic>                      persistent the broker that received DeleteTopics;
                                                             the controller removes it when done
/admin/preferred_replica_election                 persistent a tool asking for preferred leaders;
                                                             the controller removes it when done
/latest_producer_id_block                         persistent a broker reserving producer ids
                                                             (conditional set: hmb.cluster.producer_ids)
================================================  =========  ============================================

This module is pure: paths and (de)serialisation, no I/O.  Every encoder
writes compact JSON, as Kafka does; every decoder tolerates fields it does
not know (a newer writer) and fills the ones an older version lacked.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

CLUSTER_ID = "/cluster/id"
BROKER_IDS = "/brokers/ids"
BROKER_TOPICS = "/brokers/topics"
CONTROLLER = "/controller"
CONTROLLER_EPOCH = "/controller_epoch"
CONFIG_TOPICS = "/config/topics"
DELETE_TOPICS = "/admin/delete_topics"
PREFERRED_ELECTION = "/admin/preferred_replica_election"

#: the persistent parents every broker makes sure of at start (Kafka's ZkClient does the same)
PERSISTENT_PATHS = (BROKER_IDS, BROKER_TOPICS, CONFIG_TOPICS, DELETE_TOPICS, "/cluster")

NO_LEADER = -1  # a partition's leader while none of its replicas is alive
OFFSETS_TOPIC = "__consumer_offsets"  # the committed offsets' topic, made by the first controller
TXN_STATE_TOPIC = "__transaction_state"  # the transaction coordinators' topic, made on first use


def broker_path(broker_id: int) -> str:
    return f"{BROKER_IDS}/{broker_id}"


def topic_path(topic: str) -> str:
    return f"{BROKER_TOPICS}/{topic}"


def partitions_path(topic: str) -> str:
    return f"{BROKER_TOPICS}/{topic}/partitions"


def state_path(topic: str, partition: int) -> str:
    return f"{BROKER_TOPICS}/{topic}/partitions/{partition}/state"


def topic_config_path(topic: str) -> str:
    return f"{CONFIG_TOPICS}/{topic}"


def delete_topic_path(topic: str) -> str:
    return f"{DELETE_TOPICS}/{topic}"


def _dump(obj: Mapping[str, Any]) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


def _load(data: bytes) -> dict[str, Any]:
    value = json.loads(data.decode())
    if not isinstance(value, dict):
        raise ValueError(f"expected a JSON object, got {value!r}")
    return value


def now_ms() -> int:
    return int(time.time() * 1000)


# ---------------------------------------------------------------- /cluster/id


def encode_cluster_id(cluster_id: str) -> bytes:
    return _dump({"version": "1", "id": cluster_id})  # Kafka writes the version as a string here


def decode_cluster_id(data: bytes) -> str:
    return str(_load(data)["id"])


# ---------------------------------------------------------------- /brokers/ids/<id>


@dataclass(frozen=True)
class Endpoint:
    listener: str
    host: str
    port: int
    security_protocol: str


@dataclass(frozen=True)
class BrokerRegistration:
    """One live broker, as its ephemeral znode describes it (Kafka's version 5 format)."""

    broker_id: int
    endpoints: tuple[Endpoint, ...]
    rack: str | None = None
    timestamp: int = 0

    def endpoint(self, listener: str | None) -> Endpoint:
        """The endpoint of ``listener``; the first when it has none by that name."""
        return next((e for e in self.endpoints if e.listener == listener), self.endpoints[0])

    def encode(self) -> bytes:
        first = self.endpoints[0]
        obj: dict[str, Any] = {
            "listener_security_protocol_map": {e.listener: e.security_protocol for e in self.endpoints},
            "endpoints": [f"{e.listener}://{e.host}:{e.port}" for e in self.endpoints],
            "jmx_port": -1,
            "port": first.port,
            "host": first.host,
            "version": 5,
            "timestamp": str(self.timestamp or now_ms()),  # a string in Kafka's format
            "features": {},
        }
        if self.rack is not None:  # Kafka writes the key only for a broker with a rack
            obj["rack"] = self.rack
        return _dump(obj)

    @classmethod
    def decode(cls, broker_id: int, data: bytes) -> BrokerRegistration:
        obj = _load(data)
        protocols = obj.get("listener_security_protocol_map") or {}
        endpoints = []
        for text in obj.get("endpoints") or ():
            name, _, address = text.partition("://")
            host, _, port = address.rpartition(":")
            endpoints.append(Endpoint(name, host.strip("[]"), int(port), protocols.get(name, name)))
        if not endpoints:  # version 1-2: host and port only
            endpoints.append(Endpoint("PLAINTEXT", obj["host"], int(obj["port"]), "PLAINTEXT"))
        return cls(broker_id, tuple(endpoints), obj.get("rack"), int(obj.get("timestamp") or 0))


# ---------------------------------------------------------------- /controller, /controller_epoch


def encode_controller(broker_id: int) -> bytes:
    return _dump({"version": 2, "brokerid": broker_id, "timestamp": str(now_ms())})


def decode_controller(data: bytes) -> int:
    return int(_load(data)["brokerid"])


def encode_epoch(epoch: int) -> bytes:
    return str(epoch).encode()  # Kafka stores the bare number


def decode_epoch(data: bytes) -> int:
    return int(data.decode().strip() or 0)


# ---------------------------------------------------------------- /brokers/topics/<topic>


@dataclass(frozen=True)
class TopicAssignment:
    """A topic's replica assignment: partition -> replica broker ids, the first preferred leader."""

    partitions: Mapping[int, Sequence[int]]
    topic_id: str  # Kafka writes the id base64url-encoded (Uuid.toString)

    def encode(self) -> bytes:
        return _dump(
            {
                "version": 3,
                "partitions": {str(p): list(r) for p, r in sorted(self.partitions.items())},
                "topic_id": self.topic_id,
                "adding_replicas": {},
                "removing_replicas": {},
            }
        )

    @classmethod
    def decode(cls, data: bytes) -> TopicAssignment:
        obj = _load(data)
        parts = {int(p): tuple(int(b) for b in r) for p, r in (obj.get("partitions") or {}).items()}
        return cls(parts, str(obj.get("topic_id") or ""))


# ---------------------------------------------------------------- .../partitions/<p>/state


@dataclass(frozen=True)
class PartitionState:
    """Who leads a partition, since which leader epoch, with which in-sync replicas."""

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    controller_epoch: int
    #: the znode's ZooKeeper version: conditional updates (the ISR, later) are made against it
    zk_version: int = field(default=-1, compare=False)

    def encode(self) -> bytes:
        return _dump(
            {
                "controller_epoch": self.controller_epoch,
                "leader": self.leader,
                "version": 1,
                "leader_epoch": self.leader_epoch,
                "isr": list(self.isr),
            }
        )

    @classmethod
    def decode(cls, data: bytes, zk_version: int = -1) -> PartitionState:
        obj = _load(data)
        return cls(
            int(obj["leader"]),
            int(obj["leader_epoch"]),
            tuple(int(b) for b in obj.get("isr") or ()),
            int(obj.get("controller_epoch", 0)),
            zk_version,
        )


# ---------------------------------------------------------------- /config/topics/<topic>


def encode_topic_config(config: Mapping[str, str]) -> bytes:
    return _dump({"version": 1, "config": dict(config)})


def decode_topic_config(data: bytes) -> dict[str, str]:
    return {str(k): str(v) for k, v in (_load(data).get("config") or {}).items()}


#: The name of a rAck receipt under its topic's znode, before ZooKeeper's sequence number.
RECEIPT_NAME = "produce - "


def receipt_prefix(topic: str) -> str:
    """Where a rAck receipt of ``topic`` is created (a TTL sequential znode; the number is ZooKeeper's)."""
    return f"{BROKER_TOPICS}/{topic}/{RECEIPT_NAME}"


# ---------------------------------------------------------------- /admin/preferred_replica_election


def encode_preferred_election(partitions: Sequence[tuple[str, int]]) -> bytes:
    return _dump({"version": 1, "partitions": [{"topic": t, "partition": p} for t, p in partitions]})


def decode_preferred_election(data: bytes) -> list[tuple[str, int]]:
    """The partitions a tool asked preferred leaders for (Kafka's ZooKeeper-mode request)."""
    return [(str(e["topic"]), int(e["partition"])) for e in _load(data).get("partitions") or ()]
