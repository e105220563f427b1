"""What DescribeConfigs reports for each setting: its value, where that value comes from,
and the values behind it (Kafka's "synonyms").

A setting's value is taken from the first of these layers that sets it
(Kafka's precedence, highest first), under any of its names:

    DYNAMIC_TOPIC_CONFIG (1)           the topic's own override (``retention.ms``)
    DYNAMIC_BROKER_CONFIG (2)          set at run time for this broker (``log.retention.ms``)
    DYNAMIC_DEFAULT_BROKER_CONFIG (3)  set at run time for every broker
    STATIC_BROKER_CONFIG (4)           server.properties or ``--override``
    DEFAULT_CONFIG (5)                 the table's default

The synonyms of an entry list every layer that sets it, in that order, the
default last, each under the name it was given (``log.retention.hours=24``),
so a tool can show why a value is what it is.  A value is reported in the
unit of the entry's own name (``retention.ms`` 86400000 for
``log.retention.hours=24``).

Rule: the settings a topic can override (those with a topic-level name) are
the ones that can change at run time, for a topic and for the broker, as
Kafka's dynamic log settings; every other broker setting is read-only.  This
module is pure: the layers come in as mappings of names to text.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import IntEnum

from hmb.properties.model import ConfigError, Property, as_text
from hmb.properties.table import BROKER_PROPERTIES, PROPERTIES, TOPIC_PROPERTIES


class Source(IntEnum):
    """Kafka's ``ConfigSource`` codes."""

    UNKNOWN = 0
    DYNAMIC_TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5


class ConfigType(IntEnum):
    """Kafka's ``ConfigType`` codes (DescribeConfigs v3+)."""

    UNKNOWN = 0
    BOOLEAN = 1
    STRING = 2
    INT = 3
    SHORT = 4
    LONG = 5
    DOUBLE = 6
    LIST = 7
    CLASS = 8
    PASSWORD = 9


_TYPES = {
    "int": ConfigType.INT,
    "long": ConfigType.LONG,
    "boolean": ConfigType.BOOLEAN,
    "string": ConfigType.STRING,
    "list": ConfigType.LIST,
    "listener": ConfigType.STRING,
    "double": ConfigType.DOUBLE,
    "password": ConfigType.PASSWORD,
}


@dataclass(frozen=True)
class Layers:
    """The values set for a resource, by layer, as name -> text (highest precedence first)."""

    topic: Mapping[str, str] = field(default_factory=dict)
    broker: Mapping[str, str] = field(default_factory=dict)
    cluster: Mapping[str, str] = field(default_factory=dict)
    static: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Entry:
    """One setting as DescribeConfigs reports it."""

    name: str
    value: str | None
    source: Source
    read_only: bool
    sensitive: bool
    config_type: ConfigType
    documentation: str
    synonyms: tuple[tuple[str, str | None, Source], ...]


def is_dynamic(prop: Property) -> bool:
    """Whether ``prop`` may change at run time (see the module's rule)."""
    return prop.topic is not None


DYNAMIC_BROKER_NAMES = frozenset(name for p in PROPERTIES if is_dynamic(p) for name in p.names)
BROKER_NAMES = {name: p for p in PROPERTIES for name in p.names}
TOPIC_NAMES = {p.topic: p for p in TOPIC_PROPERTIES if p.topic is not None}


def _chain(prop: Property, layers: Layers, *, topic: bool) -> list[tuple[str, str | None, Source]]:
    chain: list[tuple[str, str | None, Source]] = []
    if topic and prop.topic is not None and prop.topic in layers.topic:
        chain.append((prop.topic, layers.topic[prop.topic], Source.DYNAMIC_TOPIC_CONFIG))
    for values, source in (
        (layers.broker, Source.DYNAMIC_BROKER_CONFIG),
        (layers.cluster, Source.DYNAMIC_DEFAULT_BROKER_CONFIG),
        (layers.static, Source.STATIC_BROKER_CONFIG),
    ):
        chain += [(name, values[name], source) for name in prop.names if name in values]
    default = None if prop.default is None else as_text(prop.default)
    chain.append((prop.name, default, Source.DEFAULT_CONFIG))
    return chain


def _entry(prop: Property, name: str, layers: Layers, *, topic: bool) -> Entry:
    chain = _chain(prop, layers, topic=topic)
    first_name, first_text, source = chain[0]
    if source is Source.DEFAULT_CONFIG or first_text is None:
        value = first_text
    else:
        try:
            value = as_text(prop.parse(first_name, first_text))
        except ConfigError:  # a stored value the table no longer accepts: shown as stored
            value = first_text
    return Entry(
        name=name,
        value=value,
        source=source,
        read_only=not (topic or is_dynamic(prop)),
        sensitive=False,
        config_type=_TYPES.get(prop.kind.name, ConfigType.STRING),
        documentation=prop.full_doc,
        synonyms=tuple(chain),
    )


def topic_entries(layers: Layers) -> list[Entry]:
    """Every topic-level setting of a topic, by its topic-level name."""
    return [_entry(p, p.topic, layers, topic=True) for p in TOPIC_PROPERTIES if p.topic is not None]


def broker_entries(layers: Layers) -> list[Entry]:
    """Every broker setting, by its broker name."""
    return [_entry(p, p.name, layers, topic=False) for p in (*BROKER_PROPERTIES, *TOPIC_PROPERTIES)]


def check_topic_overrides(overrides: Mapping[str, str]) -> None:
    """ConfigError naming the first unknown or bad topic setting."""
    for name, text in overrides.items():
        prop = TOPIC_NAMES.get(name)
        if prop is None:
            raise ConfigError(f"Unknown topic config name: {name}")
        prop.parse(name, text)


def check_dynamic_broker(values: Mapping[str, str]) -> None:
    """ConfigError for a broker setting that cannot change at run time, or a bad value."""
    fixed = sorted(name for name in values if name not in DYNAMIC_BROKER_NAMES)
    if fixed:
        raise ConfigError(f"Cannot update these configs dynamically: Set({', '.join(fixed)})")
    for name, text in values.items():
        BROKER_NAMES[name].parse(name, text)
