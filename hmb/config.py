"""The broker's configuration, named and defaulted as Kafka's.

A Kafka user's ``server.properties`` works here for every setting hmb has;
a setting hmb does not know is reported once at start and ignored, the way
Kafka warns about unknown configs.  Command-line flags override the file.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from hmb.log.config import NEVER, LogConfig

log = logging.getLogger(__name__)

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 9092
DEFAULT_DATA_DIR = "hmb-data"


class ConfigError(ValueError):
    """A setting with a value that cannot be used; the message says which and why."""


@dataclass(frozen=True)
class Listener:
    host: str
    port: int

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


@dataclass(frozen=True)
class BrokerConfig:
    listener: Listener = Listener(DEFAULT_HOST, DEFAULT_PORT)  # listeners
    advertised: Listener | None = None  # advertised.listeners (default: the listener)
    log_dirs: tuple[Path, ...] = (Path(DEFAULT_DATA_DIR),)  # log.dirs / log.dir
    node_id: int = 0  # broker.id / node.id
    num_partitions: int = 1  # num.partitions
    auto_create_topics: bool = True  # auto.create.topics.enable
    socket_request_max_bytes: int = 104_857_600  # socket.request.max.bytes
    queued_max_requests: int = 500  # queued.max.requests (per connection here)
    retention_check_interval_ms: int = 300_000  # log.retention.check.interval.ms
    offset_metadata_max_bytes: int = 4096  # offset.metadata.max.bytes
    group_min_session_timeout_ms: int = 6000  # group.min.session.timeout.ms
    group_max_session_timeout_ms: int = 1_800_000  # group.max.session.timeout.ms
    # group.initial.rebalance.delay.ms: Kafka's default is 3000, which delays every new
    # group's first assignment by 3 s; 0 lets a consumer get its partitions in well under
    # a second (librdkafka's first assignment), and Kafka's value can still be configured.
    group_initial_rebalance_delay_ms: int = 0
    log: LogConfig = field(default_factory=LogConfig)

    @property
    def advertised_listener(self) -> Listener:
        return self.advertised or self.listener


# ---------------------------------------------------------------------------- parsing


def parse_properties(text: str) -> dict[str, str]:
    """Java ``.properties`` as Kafka's files use them: ``key=value`` or ``key: value``, ``#`` comments."""
    out: dict[str, str] = {}
    pending = ""
    for raw in [*text.splitlines(), ""]:  # the extra "" ends a continuation on the last line
        line = pending + raw.strip()
        pending = ""
        if not line or line.startswith(("#", "!")):
            continue
        if line.endswith("\\"):
            pending = line[:-1]
            continue
        m = re.match(r"([^=:\s]+)\s*[=:\s]\s*(.*)", line)
        if not m:
            raise ConfigError(f"cannot read the line {raw!r}: expected key=value")
        out[m.group(1)] = m.group(2)
    return out


def parse_listener(value: str, name: str) -> Listener:
    """``PLAINTEXT://host:port`` (Kafka), or plain ``host:port``; the first of a comma list."""
    first = value.split(",")[0].strip()
    if "://" in first:
        scheme, _, first = first.partition("://")
        if scheme.upper() not in ("PLAINTEXT", "PLAIN"):
            raise ConfigError(f"{name}: only PLAINTEXT listeners are supported, got {scheme}")
    host, sep, port = first.rpartition(":")
    if not sep or not port.isdigit():
        raise ConfigError(f"{name}: expected host:port or PLAINTEXT://host:port, got {value!r}")
    host = host.strip("[]") or "0.0.0.0"
    if int(port) > 65535:
        raise ConfigError(f"{name}: port {port} is not in 0-65535")
    return Listener(host, int(port))


def _int(props: dict[str, str], key: str) -> int | None:
    if key not in props:
        return None
    try:
        return int(props[key].strip())
    except ValueError:
        raise ConfigError(f"{key} must be an integer, got {props[key]!r}") from None


def _bool(props: dict[str, str], key: str) -> bool | None:
    if key not in props:
        return None
    value = props[key].strip().lower()
    if value not in ("true", "false"):
        raise ConfigError(f"{key} must be true or false, got {props[key]!r}")
    return value == "true"


_LOG_KEYS = {
    "log.segment.bytes": "segment_bytes",
    "log.index.interval.bytes": "index_interval_bytes",
    "log.index.size.max.bytes": "index_max_bytes",
    "log.retention.bytes": "retention_bytes",
    "log.flush.interval.messages": "flush_interval_messages",
    "log.flush.interval.ms": "flush_interval_ms",
    "message.max.bytes": "max_message_bytes",
}
_BROKER_INT_KEYS = {
    "num.partitions": "num_partitions",
    "socket.request.max.bytes": "socket_request_max_bytes",
    "queued.max.requests": "queued_max_requests",
    "log.retention.check.interval.ms": "retention_check_interval_ms",
    "offset.metadata.max.bytes": "offset_metadata_max_bytes",
    "group.min.session.timeout.ms": "group_min_session_timeout_ms",
    "group.max.session.timeout.ms": "group_max_session_timeout_ms",
    "group.initial.rebalance.delay.ms": "group_initial_rebalance_delay_ms",
    "broker.id": "node_id",
    "node.id": "node_id",
}
_OTHER_KEYS = {
    "listeners",
    "advertised.listeners",
    "log.dirs",
    "log.dir",
    "auto.create.topics.enable",
    "log.retention.hours",
    "log.retention.minutes",
    "log.retention.ms",
}
KNOWN_KEYS = frozenset(_LOG_KEYS) | frozenset(_BROKER_INT_KEYS) | _OTHER_KEYS


def from_properties(props: dict[str, str], base: BrokerConfig | None = None) -> BrokerConfig:
    """A config from Kafka-named properties, on top of ``base`` (defaults if None)."""
    cfg = base or BrokerConfig()
    unknown = sorted(set(props) - KNOWN_KEYS)
    if unknown:
        log.warning("ignoring settings hmb does not have: %s", ", ".join(unknown))
    changes: dict[str, object] = {}
    if "listeners" in props:
        changes["listener"] = parse_listener(props["listeners"], "listeners")
    if "advertised.listeners" in props:
        changes["advertised"] = parse_listener(props["advertised.listeners"], "advertised.listeners")
    dirs = props.get("log.dirs", props.get("log.dir"))
    if dirs is not None:
        paths = tuple(Path(d.strip()) for d in dirs.split(",") if d.strip())
        if not paths:
            raise ConfigError("log.dirs is empty")
        changes["log_dirs"] = paths
    for key, attr in _BROKER_INT_KEYS.items():
        value = _int(props, key)
        if value is not None:
            changes[attr] = value
    auto = _bool(props, "auto.create.topics.enable")
    if auto is not None:
        changes["auto_create_topics"] = auto

    log_changes: dict[str, object] = {}
    for key, attr in _LOG_KEYS.items():
        value = _int(props, key)
        if value is not None:
            log_changes[attr] = NEVER if value < 0 and attr.startswith("flush") else value
    # Kafka: log.retention.ms wins over .minutes, which wins over .hours; -1 = keep forever.
    for key, factor in (
        ("log.retention.hours", 3_600_000),
        ("log.retention.minutes", 60_000),
        ("log.retention.ms", 1),
    ):
        value = _int(props, key)
        if value is not None:
            log_changes["retention_ms"] = -1 if value < 0 else value * factor
    if log_changes:
        changes["log"] = replace(cfg.log, **log_changes)  # type: ignore[arg-type]
    new = replace(cfg, **changes)  # type: ignore[arg-type]
    validate(new)
    return new


def validate(cfg: BrokerConfig) -> None:
    checks = [
        (cfg.num_partitions >= 1, "num.partitions must be at least 1"),
        (cfg.socket_request_max_bytes >= 1024, "socket.request.max.bytes must be at least 1024"),
        (cfg.queued_max_requests >= 1, "queued.max.requests must be at least 1"),
        (cfg.log.segment_bytes >= 1024, "log.segment.bytes must be at least 1024"),
        (cfg.log.index_interval_bytes >= 0, "log.index.interval.bytes must not be negative"),
        (cfg.log.index_max_bytes >= 8, "log.index.size.max.bytes must be at least 8"),
        (cfg.log.max_message_bytes >= 0, "message.max.bytes must not be negative"),
        (cfg.log.flush_interval_messages >= 1, "log.flush.interval.messages must be at least 1"),
        (0 <= cfg.listener.port < 65536, "the listener port must be 0-65535"),
        (cfg.group_min_session_timeout_ms >= 0, "group.min.session.timeout.ms must not be negative"),
        (
            cfg.group_max_session_timeout_ms >= cfg.group_min_session_timeout_ms,
            "group.max.session.timeout.ms must be at least group.min.session.timeout.ms",
        ),
        (cfg.group_initial_rebalance_delay_ms >= 0, "group.initial.rebalance.delay.ms must not be negative"),
    ]
    for ok, message in checks:
        if not ok:
            raise ConfigError(message)


def read_properties_file(path: Path) -> dict[str, str]:
    try:
        text = path.read_text()
    except OSError as exc:
        raise ConfigError(f"cannot read the config file {path}: {exc.strerror}") from None
    return parse_properties(text)


def load_file(path: Path, base: BrokerConfig | None = None) -> BrokerConfig:
    return from_properties(read_properties_file(path), base)
