"""The broker's configuration, named and defaulted as Kafka's.

Every setting is declared once, in the property table (hmb.properties.table):
this module reads ``server.properties`` and ``--override`` values through it
into a :class:`BrokerConfig`, whose fields are the table's broker-wide
properties and whose ``log`` is the topic defaults (hmb.log.config).  A Kafka
user's ``server.properties`` works here for every setting hmb has; a setting
hmb does not know is reported once at start and ignored, the way Kafka warns
about unknown configs.  Command-line flags override the file (hmb.cli).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from hmb.log.config import TopicConfig
from hmb.properties import (
    BROKER_PROPERTIES,
    PROPERTIES,
    TOPIC_PROPERTIES,
    ConfigError,
    Listener,
    Property,
    as_text,
    default_of,
    known_names,
    parse_listener,
    resolve,
)

__all__ = [
    "KNOWN_KEYS",
    "BrokerConfig",
    "ConfigError",
    "Listener",
    "check_relations",
    "from_properties",
    "load_file",
    "parse_listener",
    "parse_properties",
    "read_properties_file",
]

log = logging.getLogger(__name__)

KNOWN_KEYS = known_names(PROPERTIES)  # every name hmb reads, synonyms included


@dataclass(frozen=True)
class BrokerConfig:
    """Every broker-wide setting, under the ``attr`` the table gives it."""

    # A Listener is frozen, so sharing the table's default is safe.
    listener: Listener = default_of("listeners")  # noqa: RUF009
    advertised: Listener | None = default_of("advertised.listeners")  # noqa: RUF009 (None: the listener)
    socket_request_max_bytes: int = default_of("socket.request.max.bytes")
    queued_max_requests: int = default_of("queued.max.requests")  # per connection here
    node_id: int = default_of("node.id")
    num_partitions: int = default_of("num.partitions")
    auto_create_topics: bool = default_of("auto.create.topics.enable")
    log_dirs: tuple[Path, ...] = default_of("log.dirs")
    num_recovery_threads_per_data_dir: int = default_of("num.recovery.threads.per.data.dir")
    retention_check_interval_ms: int = default_of("log.retention.check.interval.ms")
    offset_metadata_max_bytes: int = default_of("offset.metadata.max.bytes")
    group_min_session_timeout_ms: int = default_of("group.min.session.timeout.ms")
    group_max_session_timeout_ms: int = default_of("group.max.session.timeout.ms")
    group_initial_rebalance_delay_ms: int = default_of("group.initial.rebalance.delay.ms")
    log: TopicConfig = field(default_factory=TopicConfig)  # every topic's defaults

    @property
    def advertised_listener(self) -> Listener:
        return self.advertised or self.listener


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


def from_properties(props: dict[str, str], base: BrokerConfig | None = None) -> BrokerConfig:
    """A config from Kafka-named properties, on top of ``base`` (defaults if None)."""
    cfg = base or BrokerConfig()
    unknown = sorted(set(props) - KNOWN_KEYS)
    if unknown:
        log.warning("ignoring settings hmb does not have: %s", ", ".join(unknown))
    broker = resolve(props, BROKER_PROPERTIES)
    topic = resolve(props, TOPIC_PROPERTIES)
    _warn_not_acted_on({**broker, **topic})
    new = replace(cfg, **_by_attr(broker), log=replace(cfg.log, **_by_attr(topic)))
    check_relations(new)
    return new


def _by_attr(values: dict[Property, Any]) -> dict[str, Any]:
    return {p.attr: value for p, value in values.items()}


def _warn_not_acted_on(values: dict[Property, Any]) -> None:
    changed = [f"{p.name}={as_text(v)}" for p, v in values.items() if not p.acted_on and v != p.default]
    if changed:
        log.warning("accepted, but hmb does not act on these settings yet: %s", ", ".join(changed))


def check_relations(cfg: BrokerConfig) -> None:
    """Rules between settings, which the table's one-value checks cannot state."""
    if cfg.group_max_session_timeout_ms < cfg.group_min_session_timeout_ms:
        raise ConfigError("group.max.session.timeout.ms must be at least group.min.session.timeout.ms")


def read_properties_file(path: Path) -> dict[str, str]:
    try:
        text = path.read_text()
    except OSError as exc:
        raise ConfigError(f"cannot read the config file {path}: {exc.strerror}") from None
    return parse_properties(text)


def load_file(path: Path, base: BrokerConfig | None = None) -> BrokerConfig:
    return from_properties(read_properties_file(path), base)
