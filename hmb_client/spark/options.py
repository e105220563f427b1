"""The connector's options: Spark's Kafka-source names, parsed and checked once.

The names, defaults and offset JSON are those of Spark's built-in Kafka
source (``kafka.bootstrap.servers``, ``subscribe``, ``assign``,
``startingOffsets``, ...), so a job written for ``format("kafka")`` runs
with ``format("hmb")`` by changing one word.  Checking happens on the
driver, when the DataFrame is defined, so a typo fails there and not in
a task on an executor.

``kafka.<setting>`` options whose snake_case form is a setting of
:class:`~hmb_client.consumer.Consumer` (``kafka.max.partition.fetch.bytes``)
or :class:`~hmb_client.producer.Producer` (``kafka.linger.ms``) go to that
client, as Spark hands ``kafka.*`` to the Java client; others are ignored,
as Kafka's client ignores unknown settings.

This module imports nothing from pyspark: it is plain data and parsing,
testable on its own.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from hmb_client.consumer import ConsumerConfig
from hmb_client.producer.config import ProducerConfig
from hmb_client.structs import TopicPartition

EARLIEST = -2  # Spark's (and Kafka's ListOffsets') codes inside offset JSON
LATEST = -1

# A spec: "earliest", "latest", or offsets per partition (which may hold EARLIEST/LATEST).
OffsetSpec = str | dict[TopicPartition, int]

# The connector decides where reading starts and never commits; callables cannot be options.
_CONSUMER_SETTINGS = {f.name for f in fields(ConsumerConfig)} - {
    "bootstrap_servers",
    "group_id",
    "auto_offset_reset",
    "enable_auto_commit",
    "key_deserializer",
    "value_deserializer",
    "api_version",
}
_PRODUCER_SETTINGS = {f.name for f in fields(ProducerConfig)} - {
    "bootstrap_servers",
    "key_serializer",
    "value_serializer",
    "api_version",
}
_INT_SETTING = re.compile(r"^-?\d+$")


class OptionError(ValueError):
    """An option is missing, unknown in value, or not allowed for this kind of query."""


def _lower(options: Mapping[str, str]) -> dict[str, str]:
    # Spark hands options over case-insensitively; the names here are all lower case.
    return {k.lower(): v for k, v in options.items()}


def _client_settings(options: Mapping[str, str], allowed: set[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in options.items():
        if not name.startswith("kafka.") or name == "kafka.bootstrap.servers":
            continue
        key = name[len("kafka.") :].replace(".", "_")
        if key in allowed:
            out[key] = int(value) if _INT_SETTING.match(value) else value
    return out


def _bootstrap(options: Mapping[str, str]) -> str:
    servers = options.get("kafka.bootstrap.servers", "").strip()
    if not servers:
        raise OptionError("option 'kafka.bootstrap.servers' is required (host:port[,host:port...])")
    return servers


def parse_offsets(text: str, *, name: str) -> OffsetSpec:
    """``earliest``, ``latest`` or Spark's JSON ``{"topic": {"0": 23, "1": -2}}``."""
    word = text.strip().lower()
    if word in ("earliest", "latest"):
        return word
    try:
        raw = json.loads(text)
        return {
            TopicPartition(topic, int(p)): int(off)
            for topic, parts in raw.items()
            for p, off in parts.items()
        }
    except (ValueError, AttributeError, TypeError) as exc:
        raise OptionError(
            f"option {name!r} must be 'earliest', 'latest' or JSON like "
            f'{{"topic": {{"0": 23, "1": -2}}}}, not {text!r}'
        ) from exc


def offsets_json(offsets: Mapping[TopicPartition, int]) -> dict[str, dict[str, int]]:
    """Offsets in Spark's nested form (the streaming checkpoint stores exactly this)."""
    out: dict[str, dict[str, int]] = {}
    for tp, off in sorted(offsets.items()):
        out.setdefault(tp.topic, {})[str(tp.partition)] = off
    return out


def offsets_from_json(raw: Mapping[str, Mapping[str, int]]) -> dict[TopicPartition, int]:
    return {TopicPartition(t, int(p)): int(o) for t, parts in raw.items() for p, o in parts.items()}


def _positive(options: Mapping[str, str], name: str) -> int | None:
    text = options.get(name.lower())
    if text is None:
        return None
    try:
        value = int(text)
    except ValueError:
        raise OptionError(f"option {name!r} must be a positive integer, not {text!r}") from None
    if value < 1:
        raise OptionError(f"option {name!r} must be a positive integer, not {text!r}")
    return value


def _flag(options: Mapping[str, str], name: str, default: bool) -> bool:
    text = options.get(name.lower())
    if text is None:
        return default
    if text.strip().lower() not in ("true", "false"):
        raise OptionError(f"option {name!r} must be true or false, not {text!r}")
    return text.strip().lower() == "true"


@dataclass(frozen=True)
class SourceOptions:
    """What to read: which partitions, from where to where, and how to split the work."""

    bootstrap: str
    subscribe: tuple[str, ...] = ()
    subscribe_pattern: str | None = None
    assign: tuple[TopicPartition, ...] = ()
    starting: OffsetSpec = "earliest"
    ending: OffsetSpec = "latest"
    max_offsets_per_trigger: int | None = None
    min_partitions: int | None = None
    max_records_per_partition: int | None = None
    include_headers: bool = False
    fail_on_data_loss: bool = True
    poll_timeout_ms: int = 120_000  # Spark's kafkaConsumer.pollTimeoutMs
    consumer: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def parse(cls, options: Mapping[str, str], *, streaming: bool) -> SourceOptions:
        """Check ``options`` as Spark's Kafka source does for a batch or a streaming query."""
        o = _lower(options)
        strategies = [k for k in ("subscribe", "subscribepattern", "assign") if k in o]
        if len(strategies) != 1:
            raise OptionError(
                "exactly one of the options 'subscribe', 'subscribePattern', 'assign' is needed"
            )
        subscribe = tuple(t.strip() for t in o.get("subscribe", "").split(",") if t.strip())
        if "subscribe" in o and not subscribe:
            raise OptionError("option 'subscribe' names no topic")
        assign: tuple[TopicPartition, ...] = ()
        if "assign" in o:
            try:
                raw = json.loads(o["assign"])
                assign = tuple(TopicPartition(t, int(p)) for t, parts in raw.items() for p in parts)
            except (ValueError, AttributeError, TypeError) as exc:
                raise OptionError(
                    f"option 'assign' must be JSON like {{\"topicA\": [0, 1]}}, not {o['assign']!r}"
                ) from exc
            if not assign:
                raise OptionError("option 'assign' names no partition")
        starting = parse_offsets(
            o.get("startingoffsets", "latest" if streaming else "earliest"), name="startingOffsets"
        )
        ending: OffsetSpec = "latest"
        if streaming:
            if "endingoffsets" in o:
                raise OptionError("option 'endingOffsets' is for batch queries only")
        else:
            ending = parse_offsets(o.get("endingoffsets", "latest"), name="endingOffsets")
            if starting == "latest":
                raise OptionError("startingOffsets 'latest' is not allowed in a batch query")
            if ending == "earliest":
                raise OptionError("endingOffsets 'earliest' is not allowed in a batch query")
            if isinstance(starting, dict) and LATEST in starting.values():
                raise OptionError("startingOffsets -1 (latest) is not allowed in a batch query")
            if isinstance(ending, dict) and EARLIEST in ending.values():
                raise OptionError("endingOffsets -2 (earliest) is not allowed in a batch query")
        poll_ms = _positive(o, "kafkaConsumer.pollTimeoutMs")
        return cls(
            bootstrap=_bootstrap(o),
            subscribe=subscribe,
            subscribe_pattern=o.get("subscribepattern"),
            assign=assign,
            starting=starting,
            ending=ending,
            max_offsets_per_trigger=_positive(o, "maxOffsetsPerTrigger"),
            min_partitions=_positive(o, "minPartitions"),
            max_records_per_partition=_positive(o, "maxRecordsPerPartition"),
            include_headers=_flag(o, "includeHeaders", False),
            fail_on_data_loss=_flag(o, "failOnDataLoss", True),
            poll_timeout_ms=poll_ms if poll_ms is not None else cls.poll_timeout_ms,
            consumer=_client_settings(o, _CONSUMER_SETTINGS),
        )


@dataclass(frozen=True)
class SinkOptions:
    """Where to write: the brokers, and a topic that overrides the ``topic`` column (as in Spark)."""

    bootstrap: str
    topic: str | None = None
    producer: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def parse(cls, options: Mapping[str, str]) -> SinkOptions:
        o = _lower(options)
        return cls(
            bootstrap=_bootstrap(o),
            topic=o.get("topic") or None,
            producer=_client_settings(o, _PRODUCER_SETTINGS),
        )
