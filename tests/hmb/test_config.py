"""Tests of the broker configuration (hmb.config) and of ``hmb serve``'s precedence
(hmb.cli.config_from_args): Kafka's property names, formats and defaults."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from hmb.cli import build_parser, config_from_args
from hmb.config import (
    BrokerConfig,
    ConfigError,
    Listener,
    from_properties,
    load_file,
    parse_listener,
    parse_properties,
)
from hmb.log.config import NEVER, LogConfig

# --------------------------------------------------------------------------- .properties syntax


def test_parse_properties_syntax() -> None:
    text = """
# Kafka's server.properties style
! also a comment
broker.id=3
listeners = PLAINTEXT://0.0.0.0:9093
num.partitions: 4
log.retention.hours 24
   log.segment.bytes=2048{trailing}
log.dirs=/data/a,\\
         /data/b,\\
    /data/c
# a comment ending in a backslash does not continue \\
message.max.bytes=1000
empty.value=
url=http://h:1/x=y
""".format(trailing="   ")
    props = parse_properties(text)
    assert props == {
        "broker.id": "3",
        "listeners": "PLAINTEXT://0.0.0.0:9093",
        "num.partitions": "4",
        "log.retention.hours": "24",
        "log.segment.bytes": "2048",
        "log.dirs": "/data/a,/data/b,/data/c",
        "message.max.bytes": "1000",
        "empty.value": "",
        "url": "http://h:1/x=y",  # only the first separator separates
    }


def test_parse_properties_later_key_wins_and_crlf() -> None:
    assert parse_properties("a=1\r\nb=2\r\na=3\r\n") == {"a": "3", "b": "2"}


def test_continuation_on_the_last_line_keeps_the_setting() -> None:
    assert parse_properties("a=1\nlog.dirs=/x,\\") == {"a": "1", "log.dirs": "/x,"}
    assert parse_properties("log.dirs=/x,\\\n") == {"log.dirs": "/x,"}


def test_parse_properties_rejects_unreadable_line() -> None:
    with pytest.raises(ConfigError, match="=oops"):
        parse_properties("good=1\n=oops\n")


# --------------------------------------------------------------------------- Kafka names


def test_defaults_are_kafkas() -> None:
    cfg = from_properties({})
    assert cfg == BrokerConfig()
    assert cfg.log.retention_ms == 168 * 3600 * 1000
    assert cfg.log.segment_bytes == 1 << 30
    assert cfg.log.flush_interval_messages == NEVER
    assert cfg.listener == Listener("127.0.0.1", 9092)
    assert cfg.advertised_listener == cfg.listener


def test_from_properties_kafka_names() -> None:
    cfg = from_properties(
        {
            "listeners": "PLAINTEXT://0.0.0.0:9093",
            "advertised.listeners": "PLAINTEXT://broker.example:19093",
            "log.dirs": "/data/a, /data/b ,/data/c",
            "broker.id": "7",
            "num.partitions": "6",
            "auto.create.topics.enable": "false",
            "log.segment.bytes": "1048576",
            "log.index.interval.bytes": "1024",
            "log.index.size.max.bytes": "65536",
            "log.retention.bytes": "123456789",
            "log.flush.interval.messages": "10",
            "log.flush.interval.ms": "500",
            "message.max.bytes": "2000000",
            "socket.request.max.bytes": "2000000",
            "queued.max.requests": "16",
            "log.retention.check.interval.ms": "1000",
            "offset.metadata.max.bytes": "100",
        }
    )
    assert cfg.listener == Listener("0.0.0.0", 9093)
    assert cfg.advertised_listener == Listener("broker.example", 19093)
    assert cfg.log_dirs == (Path("/data/a"), Path("/data/b"), Path("/data/c"))
    assert cfg.node_id == 7
    assert cfg.num_partitions == 6
    assert cfg.auto_create_topics is False
    assert cfg.socket_request_max_bytes == 2_000_000
    assert cfg.queued_max_requests == 16
    assert cfg.retention_check_interval_ms == 1000
    assert cfg.offset_metadata_max_bytes == 100
    assert cfg.log == LogConfig(
        segment_bytes=1048576,
        index_interval_bytes=1024,
        index_max_bytes=65536,
        retention_bytes=123456789,
        flush_interval_messages=10,
        flush_interval_ms=500,
        max_message_bytes=2_000_000,
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("PLAINTEXT://0.0.0.0:9093", Listener("0.0.0.0", 9093)),
        ("plaintext://host:1", Listener("host", 1)),
        ("PLAINTEXT://:9092", Listener("0.0.0.0", 9092)),  # Kafka: empty host = all interfaces
        ("PLAINTEXT://[::1]:9092", Listener("::1", 9092)),
        ("localhost:0", Listener("localhost", 0)),
        ("PLAINTEXT://a:1,SSL://b:2", Listener("a", 1)),  # the first names the broker in messages
    ],
)
def test_listeners(value: str, expected: Listener) -> None:
    assert from_properties({"listeners": value}).listener == expected
    assert parse_listener(value, "x") == expected


def test_several_named_listeners() -> None:
    cfg = from_properties(
        {
            "listeners": "PLAINTEXT://:9092,SASL_SSL://h:9094,internal://127.0.0.1:9095",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL,INTERNAL:SSL",
            "advertised.listeners": "SASL_SSL://public.example:19094",
            "inter.broker.listener.name": "INTERNAL",
        }
    )
    assert cfg.listeners == (
        Listener("0.0.0.0", 9092, "PLAINTEXT"),
        Listener("h", 9094, "SASL_SSL"),
        Listener("127.0.0.1", 9095, "INTERNAL"),
    )
    assert cfg.security_protocol("INTERNAL") == "SSL"
    assert cfg.advertised_for("SASL_SSL") == Listener("public.example", 19094, "SASL_SSL")
    assert cfg.advertised_for("PLAINTEXT") is None
    assert cfg.advertised_listener == cfg.listener


@pytest.mark.parametrize(
    ("props", "named"),
    [
        ({"listeners": "CUSTOM://h:1"}, "CUSTOM"),  # no protocol for the name
        ({"listeners": "PLAINTEXT://h:1,PLAINTEXT://h:2"}, "PLAINTEXT"),
        ({"advertised.listeners": "SSL://h:1"}, "SSL"),  # advertises a listener that does not exist
        ({"inter.broker.listener.name": "NOPE"}, "NOPE"),
        ({"listener.security.protocol.map": "PLAINTEXT:KERBEROS"}, "KERBEROS"),
    ],
)
def test_listener_mistakes_are_named(props: dict[str, str], named: str) -> None:
    with pytest.raises(ConfigError, match=named):
        from_properties(props)


def test_per_listener_settings_are_kept_not_warned(caplog: pytest.LogCaptureFixture) -> None:
    cfg = from_properties({"listener.name.SASL_SSL.plain.sasl.jaas.config": "X required;"})
    assert cfg.listener_setting("SASL_SSL", "plain.sasl.jaas.config") == "X required;"
    assert "ignoring" not in caplog.text


def test_log_dir_and_log_dirs() -> None:
    assert from_properties({"log.dir": "/one"}).log_dirs == (Path("/one"),)
    assert from_properties({"log.dir": "/one", "log.dirs": "/two,/three"}).log_dirs == (
        Path("/two"),
        Path("/three"),
    )


@pytest.mark.parametrize(
    ("props", "retention_ms"),
    [
        ({"log.retention.hours": "10"}, 10 * 3_600_000),
        ({"log.retention.minutes": "10"}, 600_000),
        ({"log.retention.ms": "10"}, 10),
        # Kafka: .ms wins over .minutes, which wins over .hours, whatever the order in the file
        ({"log.retention.ms": "1234", "log.retention.minutes": "5", "log.retention.hours": "10"}, 1234),
        ({"log.retention.minutes": "5", "log.retention.hours": "10"}, 300_000),
        ({"log.retention.hours": "10", "log.retention.ms": "-1"}, -1),
        ({"log.retention.hours": "-1"}, -1),  # keep forever
    ],
)
def test_retention_precedence(props: dict[str, str], retention_ms: int) -> None:
    assert from_properties(props).log.retention_ms == retention_ms


def test_minus_one_flush_means_never() -> None:
    cfg = from_properties({"log.flush.interval.messages": "-1", "log.flush.interval.ms": "-1"})
    assert cfg.log.flush_interval_messages == NEVER
    assert cfg.log.flush_interval_ms == NEVER
    # retention.bytes keeps its -1 (no limit), it is not a flush setting
    assert from_properties({"log.retention.bytes": "-1"}).log.retention_bytes == -1


def test_from_properties_applies_on_top_of_a_base() -> None:
    base = from_properties({"num.partitions": "3", "log.segment.bytes": "4096"})
    cfg = from_properties({"log.retention.bytes": "100"}, base)
    assert cfg.num_partitions == 3
    assert cfg.log.segment_bytes == 4096
    assert cfg.log.retention_bytes == 100


def test_unknown_keys_are_warned_about_and_ignored(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="hmb.config")
    cfg = from_properties({"background.threads": "10", "num.partitions": "2", "num.network.threads": "3"})
    assert cfg == from_properties({"num.partitions": "2"})
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "background.threads" in warnings[0] and "num.network.threads" in warnings[0]
    assert "num.partitions" not in warnings[0]
    caplog.clear()
    from_properties({"num.partitions": "2"})
    assert not caplog.records


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("num.partitions", "abc"),
        ("num.partitions", "0"),
        ("broker.id", "1.5"),
        ("auto.create.topics.enable", "yes"),
        ("log.segment.bytes", "100"),
        ("log.segment.bytes", ""),
        ("log.index.interval.bytes", "-1"),
        ("log.index.size.max.bytes", "4"),
        ("log.retention.hours", "1.5"),
        ("log.retention.minutes", "x"),
        ("log.retention.ms", "1e3"),
        ("log.retention.bytes", "lots"),
        ("log.flush.interval.messages", "0"),
        ("log.flush.interval.ms", "soon"),
        ("message.max.bytes", "-5"),
        ("socket.request.max.bytes", "10"),
        ("queued.max.requests", "0"),
        ("listeners", "nohost"),
        ("listeners", "SS-L://h:9093"),
        ("listeners", "PLAINTEXT://h:70000"),
        ("listeners", "PLAINTEXT://h:port"),
        ("advertised.listeners", "h:"),
        ("log.dirs", " , "),
    ],
)
def test_bad_values_name_the_key(key: str, value: str) -> None:
    with pytest.raises(ConfigError) as exc_info:
        from_properties({key: value})
    assert key in str(exc_info.value)


# --------------------------------------------------------------------------- files and flags


def test_load_file(tmp_path: Path) -> None:
    path = tmp_path / "server.properties"
    path.write_text("num.partitions=5\nlog.dirs=/x\n")
    cfg = load_file(path)
    assert cfg.num_partitions == 5 and cfg.log_dirs == (Path("/x"),)
    with pytest.raises(ConfigError, match=r"missing\.properties"):
        load_file(tmp_path / "missing.properties")


def _args(*argv: str) -> BrokerConfig:
    return config_from_args(build_parser().parse_args(list(argv)))


def test_cli_precedence_file_override_flags(tmp_path: Path) -> None:
    path = tmp_path / "server.properties"
    path.write_text(
        "\n".join(
            [
                "listeners=PLAINTEXT://file-host:1111",
                "advertised.listeners=PLAINTEXT://file-adv:1112",
                "log.dirs=/from/file",
                "num.partitions=2",
                "log.segment.bytes=8192",
                "auto.create.topics.enable=false",
            ]
        )
    )
    file_only = _args("--config", str(path))
    assert file_only.listener == Listener("file-host", 1111)
    assert file_only.num_partitions == 2

    overridden = _args(
        "--config", str(path),
        "--override", "num.partitions=3",
        "--override", "listeners=PLAINTEXT://override-host:2222",
        "--override", "log.dirs=/from/override",
    )  # fmt: skip
    assert overridden.num_partitions == 3  # --override beats the file
    assert overridden.listener == Listener("override-host", 2222)
    assert overridden.log_dirs == (Path("/from/override"),)
    assert overridden.log.segment_bytes == 8192  # what is not overridden stays
    assert overridden.auto_create_topics is False

    flags = _args(
        "--config", str(path),
        "--override", "listeners=PLAINTEXT://override-host:2222",
        "--override", "log.dirs=/from/override",
        "--listen", "flag-host:3333",
        "--advertise", "flag-adv:3334",
        "--data-dir", "/from/flag",
    )  # fmt: skip
    assert flags.listener == Listener("flag-host", 3333)  # dedicated flags beat everything
    assert flags.advertised_listener == Listener("flag-adv", 3334)
    assert flags.log_dirs == (Path("/from/flag"),)
    assert flags.log.segment_bytes == 8192


def test_cli_defaults_without_anything() -> None:
    assert _args() == BrokerConfig()


@pytest.mark.parametrize("bad", ["novalue", "=1"])
def test_cli_bad_override(bad: str) -> None:
    with pytest.raises(ConfigError, match="--override"):
        _args("--override", bad)


def test_cli_bad_listen_flag() -> None:
    with pytest.raises(ConfigError, match="--listen"):
        _args("--listen", "nowhere")


def test_file_retention_ms_still_wins_over_an_overridden_hours(tmp_path: Path) -> None:
    """Kafka's precedence among related keys holds across the file and --override."""
    from hmb.cli import build_parser, config_from_args

    props = tmp_path / "server.properties"
    props.write_text("log.retention.ms=1000\n")
    ns = build_parser().parse_args(["--config", str(props), "--override", "log.retention.hours=5"])
    assert config_from_args(ns).log.retention_ms == 1000
    ns = build_parser().parse_args(["--override", "log.retention.hours=5"])
    assert config_from_args(ns).log.retention_ms == 5 * 3_600_000


def test_listen_flag_keeps_the_advertised_address_of_its_listener() -> None:
    cfg = _args("--listen", "127.0.0.1:0", "--override", "advertised.listeners=PLAINTEXT://proxy:19092")
    assert cfg.listener == Listener("127.0.0.1", 0)
    assert cfg.advertised_listener == Listener("proxy", 19092)
