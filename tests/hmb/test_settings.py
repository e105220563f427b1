"""The settings service: precedence, sources and synonyms, run-time changes that last.

What a user relies on: DescribeConfigs says where each value comes from
(topic override > this broker's dynamic value > the cluster-wide default >
server.properties > the default), a dynamic broker change reaches every
topic that does not override it at once and survives a restart, and a
refused change (a setting that cannot change at run time, a bad value,
another broker's id) changes nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hmb.broker import Broker
from hmb.config import BrokerConfig, ConfigError, from_properties
from hmb.properties.describe import ConfigType, Source
from hmb.settings import UnknownResourceError

HOUR = 3_600_000


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return tmp_path / "data"


def open_broker(data: Path, **props: str) -> Broker:
    config = from_properties(dict(props), BrokerConfig(log_dirs=(data,)))
    broker = Broker(config)
    broker.open()
    return broker


@pytest.fixture
def broker(data: Path) -> Iterator[Broker]:
    b = open_broker(data, **{"log.retention.hours": "24"})
    b.logs.create_topic("plain", 1)
    b.logs.create_topic("own", 1, {"retention.ms": "5000"})
    yield b
    b.close()


def entry(entries: list, name: str):  # type: ignore[no-untyped-def]
    return next(e for e in entries if e.name == name)


def test_a_topic_entry_says_where_its_value_comes_from(broker: Broker) -> None:
    own = entry(broker.settings.describe_topic("own"), "retention.ms")
    assert (own.value, own.source, own.read_only, own.config_type) == (
        "5000",
        Source.DYNAMIC_TOPIC_CONFIG,
        False,
        ConfigType.LONG,
    )
    assert [(n, v, s) for n, v, s in own.synonyms] == [
        ("retention.ms", "5000", Source.DYNAMIC_TOPIC_CONFIG),
        ("log.retention.hours", "24", Source.STATIC_BROKER_CONFIG),
        ("log.retention.ms", str(168 * HOUR), Source.DEFAULT_CONFIG),
    ]
    plain = entry(broker.settings.describe_topic("plain"), "retention.ms")
    assert (plain.value, plain.source) == (str(24 * HOUR), Source.STATIC_BROKER_CONFIG)  # in the entry's unit
    segment = entry(broker.settings.describe_topic("plain"), "segment.bytes")
    assert (segment.value, segment.source) == ("1073741824", Source.DEFAULT_CONFIG)
    assert segment.documentation
    with pytest.raises(UnknownResourceError):
        broker.settings.describe_topic("missing")


def test_a_dynamic_broker_value_reaches_topics_without_their_own_at_once(data: Path) -> None:
    broker = open_broker(data, **{"log.retention.hours": "24"})
    broker.logs.create_topic("plain", 1)
    broker.logs.create_topic("own", 1, {"retention.ms": "5000"})
    broker.settings.set_broker("0", {"log.retention.ms": str(2 * HOUR)})
    assert broker.logs.get("plain", 0).config.retention_ms == 2 * HOUR
    assert broker.logs.get("own", 0).config.retention_ms == 5000  # the topic's override wins
    plain = entry(broker.settings.describe_topic("plain"), "retention.ms")
    assert (plain.value, plain.source) == (str(2 * HOUR), Source.DYNAMIC_BROKER_CONFIG)
    described = entry(broker.settings.describe_broker("0"), "log.retention.ms")
    assert (described.value, described.source, described.read_only) == (
        str(2 * HOUR),
        Source.DYNAMIC_BROKER_CONFIG,
        False,
    )
    broker.close()
    again = open_broker(data, **{"log.retention.hours": "24"})
    try:
        assert again.logs.get("plain", 0).config.retention_ms == 2 * HOUR
        assert again.settings.broker_values("0") == {"log.retention.ms": str(2 * HOUR)}
    finally:
        again.close()


def test_this_broker_wins_over_the_cluster_default(broker: Broker) -> None:
    broker.settings.set_broker("", {"log.segment.bytes": "4096", "message.max.bytes": "2000"})
    broker.settings.set_broker("0", {"log.segment.bytes": "8192"})
    cfg = broker.logs.get("plain", 0).config
    assert (cfg.segment_bytes, cfg.max_message_bytes) == (8192, 2000)
    default = broker.settings.describe_broker("")
    assert {(e.name, e.value, e.source) for e in default} == {
        ("log.segment.bytes", "4096", Source.DYNAMIC_DEFAULT_BROKER_CONFIG),
        ("message.max.bytes", "2000", Source.DYNAMIC_DEFAULT_BROKER_CONFIG),
    }
    broker.settings.set_broker("0", {})  # this broker's value removed: the cluster default again
    assert broker.logs.get("plain", 0).config.segment_bytes == 4096


@pytest.mark.parametrize(
    ("values", "words"),
    [
        ({"log.dirs": "/elsewhere"}, "Cannot update these configs dynamically: Set(log.dirs)"),
        ({"num.partitions": "3", "log.retention.ms": "1"}, "Set(num.partitions)"),
        ({"log.segment.bytes": "huge"}, "log.segment.bytes"),
    ],
)
def test_a_refused_broker_change_changes_nothing(broker: Broker, values: dict[str, str], words: str) -> None:
    before = broker.logs.get("plain", 0).config
    with pytest.raises(ConfigError) as refused:
        broker.settings.set_broker("0", values)
    assert words in str(refused.value)
    assert broker.settings.broker_values("0") == {}
    assert broker.logs.get("plain", 0).config == before
    assert entry(broker.settings.describe_broker("0"), "log.dirs").read_only


def test_another_brokers_id_is_refused(broker: Broker) -> None:
    with pytest.raises(UnknownResourceError, match="expected 0 or empty string, but received 7"):
        broker.settings.set_broker("7", {"log.retention.ms": "1"})


def test_validate_only_stores_nothing(broker: Broker) -> None:
    broker.settings.set_broker("0", {"log.retention.ms": "1"}, validate_only=True)
    broker.settings.set_topic("plain", {"retention.ms": "1"}, validate_only=True)
    assert broker.settings.broker_values("0") == {} and broker.settings.topic_overrides("plain") == {}
    with pytest.raises(ConfigError, match=r"Unknown topic config name: retention\.hours"):
        broker.settings.set_topic("plain", {"retention.hours": "1"}, validate_only=True)
