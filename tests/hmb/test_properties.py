"""The property table (hmb.properties): one declaration per setting, from which
parsing, ``hmb serve --help``, the README's settings list and the typed configs
(BrokerConfig, TopicConfig) all follow.  These tests fail when one of them
drifts from the table."""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path

import pytest

from hmb.cli import build_parser
from hmb.config import KNOWN_KEYS, BrokerConfig, ConfigError, from_properties
from hmb.log.config import NEVER, LogConfig, TopicConfig
from hmb.properties import BROKER_PROPERTIES, PROPERTIES, TOPIC_PROPERTIES, Property, as_text
from hmb.properties.__main__ import main as properties_main
from hmb.properties.render import README_END, README_START, help_text, markdown, readme_block, write_readme
from hmb.properties.table import SECTIONS

README = Path(__file__).resolve().parents[2] / "README.md"

# Kafka's own broker -> topic-level names (its TopicConfig "server default property").
KAFKA_TOPIC_NAMES = {
    "log.segment.bytes": "segment.bytes",
    "log.roll.ms": "segment.ms",
    "log.index.interval.bytes": "index.interval.bytes",
    "log.index.size.max.bytes": "segment.index.bytes",
    "log.retention.ms": "retention.ms",
    "log.retention.bytes": "retention.bytes",
    "message.max.bytes": "max.message.bytes",
    "log.flush.interval.messages": "flush.messages",
    "log.flush.interval.ms": "flush.ms",
    "log.cleanup.policy": "cleanup.policy",
    "log.message.timestamp.type": "message.timestamp.type",
    "log.message.timestamp.before.max.ms": "message.timestamp.before.max.ms",
    "log.message.timestamp.after.max.ms": "message.timestamp.after.max.ms",
    "compression.type": "compression.type",
    "min.insync.replicas": "min.insync.replicas",
    "log.segment.delete.delay.ms": "file.delete.delay.ms",
    "log.cleaner.delete.retention.ms": "delete.retention.ms",
    "log.cleaner.min.compaction.lag.ms": "min.compaction.lag.ms",
    "log.cleaner.max.compaction.lag.ms": "max.compaction.lag.ms",
    "log.cleaner.min.cleanable.ratio": "min.cleanable.dirty.ratio",
}


# --------------------------------------------------------------------------- the table itself


def test_names_are_unique() -> None:
    names = [name for p in PROPERTIES for name in p.names]
    assert len(names) == len(set(names)) == len(KNOWN_KEYS)
    topic_names = [p.topic for p in TOPIC_PROPERTIES]
    assert len(topic_names) == len(set(topic_names))
    attrs = [p.attr for p in PROPERTIES]
    assert len(attrs) == len(set(attrs))


def test_topic_level_names_are_kafkas() -> None:
    assert {p.name: p.topic for p in TOPIC_PROPERTIES} == KAFKA_TOPIC_NAMES


def test_every_property_is_documented_in_a_known_section() -> None:
    for p in PROPERTIES:
        assert p.section in SECTIONS, p.name
        assert p.doc.endswith(".") and p.doc.count(". ") <= 1, f"{p.name}: one or two sentences"


@pytest.mark.parametrize("prop", [p for p in PROPERTIES if p.default is not None], ids=lambda p: p.name)
def test_every_default_passes_its_own_checks(prop: Property) -> None:
    assert prop.parse(prop.name, as_text(prop.default)) == prop.default


# --------------------------------------------------------------------------- the typed configs


def _fields(cls: type) -> dict[str, object]:
    # ``log`` holds the topic defaults; ``listener_settings`` the listener.name.<x>.* keys;
    # ``given`` the text the settings came as
    skip = ("log", "listener_settings", "given")
    return {f.name: f.default for f in dataclasses.fields(cls) if f.name not in skip}


def test_broker_config_fields_are_the_broker_wide_properties() -> None:
    assert _fields(BrokerConfig) == {p.attr: p.default for p in BROKER_PROPERTIES}


def test_topic_config_fields_are_the_topic_level_properties() -> None:
    assert _fields(TopicConfig) == {p.attr: p.default for p in TOPIC_PROPERTIES}
    assert LogConfig is TopicConfig
    assert BrokerConfig().log == TopicConfig()


def test_topic_config_from_the_broker_wide_values() -> None:
    broker = from_properties({"log.segment.bytes": "4096", "log.retention.hours": "1"})
    topic = TopicConfig.from_broker(broker)
    assert topic == broker.log
    assert (topic.segment_bytes, topic.retention_ms) == (4096, 3_600_000)


def test_topic_overrides_use_topic_level_names() -> None:
    broker = from_properties({"log.segment.bytes": "4096"})
    topic = TopicConfig.from_broker(
        broker,
        {
            "retention.ms": "1000",
            "segment.index.bytes": "1024",
            "flush.ms": "-1",
            "flush.messages": "5",
            "max.message.bytes": "2000",
            "cleanup.policy": "compact,delete",
            "message.timestamp.type": "LogAppendTime",
            "compression.type": "zstd",
            "min.insync.replicas": "2",
            "segment.ms": "60000",
        },
    )
    assert topic.segment_bytes == 4096  # the broker-wide value where the topic sets none
    assert (topic.retention_ms, topic.index_max_bytes, topic.max_message_bytes) == (1000, 1024, 2000)
    assert (topic.flush_interval_ms, topic.flush_interval_messages) == (NEVER, 5)
    assert topic.cleanup_policy == ("compact", "delete")
    assert (topic.message_timestamp_type, topic.compression_type) == ("LogAppendTime", "zstd")
    assert (topic.min_insync_replicas, topic.segment_ms) == (2, 60_000)
    assert TopicConfig().with_overrides({}) == TopicConfig()


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"segment.bytes": "100"}, r"segment\.bytes must be at least 1024"),
        ({"retention.ms": "soon"}, r"retention\.ms must be an integer"),
        ({"cleanup.policy": "delete,shred"}, r"cleanup\.policy must be delete or compact"),
        ({"message.timestamp.type": "createtime"}, r"message\.timestamp\.type must be CreateTime"),
        ({"compression.type": "brotli"}, r"compression\.type"),
        ({"min.insync.replicas": "0"}, r"min\.insync\.replicas must be at least 1"),
        ({"segment.ms": "0"}, r"segment\.ms"),
        ({"max.message.bytes": str(2**31)}, r"max\.message\.bytes: 2147483648 is out of range"),
        # broker-level names are not topic settings, as in Kafka
        ({"log.segment.bytes": "4096"}, r"Unknown topic config name: log\.segment\.bytes"),
        ({"retention.hours": "1"}, r"Unknown topic config name: retention\.hours"),
    ],
)
def test_bad_topic_overrides_are_refused(overrides: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        TopicConfig().with_overrides(overrides)


def test_java_int_settings_are_bounded() -> None:
    with pytest.raises(ConfigError, match=r"num\.partitions: 2147483648 is out of range"):
        from_properties({"num.partitions": str(2**31)})
    assert from_properties({"log.retention.bytes": str(2**40)}).log.retention_bytes == 2**40  # a long


def test_settings_not_acted_on_are_accepted_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="hmb.config")
    props = {
        "log.cleanup.policy": "compact",
        "compression.type": "zstd",
        "log.message.timestamp.type": "LogAppendTime",
        "log.roll.hours": "1",
        "log.segment.delete.delay.ms": "1000",
        "min.insync.replicas": "2",
    }
    cfg = from_properties(props)
    assert cfg.log.cleanup_policy == ("compact",) and cfg.log.segment_ms == 3_600_000
    [warning] = [r.getMessage() for r in caplog.records]
    assert "log.segment.delete.delay.ms=1000" in warning
    assert "min.insync.replicas" not in warning  # acted on: acks=all needs that many in-sync replicas
    assert "log.cleanup.policy" not in warning  # acted on: the log cleaner compacts
    assert "compression.type" not in warning  # acted on: the log recompresses batches
    assert "log.roll.ms" not in warning  # acted on: segment.ms rolls segments by age
    assert "log.message.timestamp.type" not in warning  # acted on: the broker stamps appends
    caplog.clear()
    from_properties({"log.cleanup.policy": "delete", "compression.type": "producer"})
    assert not caplog.records  # the default is what hmb does: nothing to warn about


def test_synonym_precedence() -> None:
    assert from_properties({"log.roll.hours": "2", "log.roll.ms": "5"}).log.segment_ms == 5
    assert from_properties({"broker.id": "3", "node.id": "4"}).node_id == 4
    assert from_properties({"broker.id": "3"}).node_id == 3
    with pytest.raises(ConfigError, match=r"broker\.id"):  # a shadowed synonym is still checked
        from_properties({"broker.id": "x", "node.id": "4"})


# --------------------------------------------------------------------------- help and README


def test_help_lists_every_setting() -> None:
    text = build_parser().format_help()
    assert help_text() in text
    for p in PROPERTIES:
        for name in p.names:
            assert name in text


def test_readme_settings_block_is_generated_from_the_table() -> None:
    """After changing the table: python -m hmb.properties --readme README.md"""
    readme = README.read_text()
    assert readme.count(README_START) == 1 and readme.count(README_END) == 1
    assert readme_block(readme) == markdown()


def test_markdown_lists_every_setting() -> None:
    text = markdown()
    for p in PROPERTIES:
        assert all(f"`{name}`" in text for name in p.names)
        assert p.topic is None or f"`{p.topic}`" in text


def test_the_module_writes_the_readme_block(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(f"# title\n\nbefore\n\n{README_START}\nstale\n{README_END}\n\nafter\n")
    assert properties_main(["--readme", str(readme)]) == 0
    assert readme.read_text() == f"# title\n\nbefore\n\n{README_START}\n{markdown()}{README_END}\n\nafter\n"
    assert not write_readme(readme)  # a second run changes nothing
    capsys.readouterr()
    properties_main(["--markdown"])
    assert capsys.readouterr().out == markdown()
    properties_main([])
    assert capsys.readouterr().out == help_text() + "\n"
    readme.write_text("no markers\n")
    with pytest.raises(ValueError, match="settings:start"):
        write_readme(readme)


def test_a_compaction_lag_pair_that_makes_no_sense_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"max\.compaction\.lag\.ms must be at least"):
        from_properties({"log.cleaner.min.compaction.lag.ms": "10", "log.cleaner.max.compaction.lag.ms": "5"})
    with pytest.raises(ConfigError, match=r"max\.compaction\.lag\.ms"):
        TopicConfig().with_overrides({"min.compaction.lag.ms": "10", "max.compaction.lag.ms": "5"})
    assert TopicConfig().with_overrides({"min.compaction.lag.ms": "5", "max.compaction.lag.ms": "5"})
