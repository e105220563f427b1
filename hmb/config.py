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
LISTENER_PREFIX = "listener.name."  # Kafka's per-listener settings: listener.name.<name>.<setting>


@dataclass(frozen=True)
class BrokerConfig:
    """Every broker-wide setting, under the ``attr`` the table gives it."""

    listeners: tuple[Listener, ...] = default_of("listeners")
    advertised_listeners: tuple[Listener, ...] = default_of("advertised.listeners")  # (): the listeners
    security_protocol_map: tuple[tuple[str, str], ...] = default_of("listener.security.protocol.map")
    inter_broker_listener_name: str | None = default_of("inter.broker.listener.name")
    control_listener: Listener | None = default_of("control.listener")  # noqa: RUF009 (None: off)
    socket_request_max_bytes: int = default_of("socket.request.max.bytes")
    queued_max_requests: int = default_of("queued.max.requests")  # per connection here
    max_incremental_fetch_session_cache_slots: int = default_of("max.incremental.fetch.session.cache.slots")
    node_id: int = default_of("node.id")
    num_partitions: int = default_of("num.partitions")
    auto_create_topics: bool = default_of("auto.create.topics.enable")
    zookeeper_connect: str | None = default_of("zookeeper.connect")  # None: alone, no cluster
    zookeeper_session_timeout_ms: int = default_of("zookeeper.session.timeout.ms")
    zookeeper_connection_timeout_ms: int = default_of("zookeeper.connection.timeout.ms")
    broker_rack: str | None = default_of("broker.rack")
    default_replication_factor: int = default_of("default.replication.factor")
    offsets_topic_replication_factor: int = default_of("offsets.topic.replication.factor")
    offsets_topic_num_partitions: int = default_of("offsets.topic.num.partitions")
    transaction_state_log_num_partitions: int = default_of("transaction.state.log.num.partitions")
    transaction_state_log_replication_factor: int = default_of("transaction.state.log.replication.factor")
    transaction_state_log_min_isr: int = default_of("transaction.state.log.min.isr")
    replica_lag_time_max_ms: int = default_of("replica.lag.time.max.ms")
    replica_high_watermark_checkpoint_interval_ms: int = default_of(
        "replica.high.watermark.checkpoint.interval.ms"
    )
    replica_fetch_wait_max_ms: int = default_of("replica.fetch.wait.max.ms")
    replica_fetch_min_bytes: int = default_of("replica.fetch.min.bytes")
    replica_fetch_max_bytes: int = default_of("replica.fetch.max.bytes")
    unclean_leader_election_enable: bool = default_of("unclean.leader.election.enable")
    controlled_shutdown_enable: bool = default_of("controlled.shutdown.enable")
    controlled_shutdown_max_retries: int = default_of("controlled.shutdown.max.retries")
    controlled_shutdown_retry_backoff_ms: int = default_of("controlled.shutdown.retry.backoff.ms")
    auto_leader_rebalance_enable: bool = default_of("auto.leader.rebalance.enable")
    leader_imbalance_check_interval_seconds: int = default_of("leader.imbalance.check.interval.seconds")
    leader_imbalance_per_broker_percentage: int = default_of("leader.imbalance.per.broker.percentage")
    log_dirs: tuple[Path, ...] = default_of("log.dirs")
    num_recovery_threads_per_data_dir: int = default_of("num.recovery.threads.per.data.dir")
    retention_check_interval_ms: int = default_of("log.retention.check.interval.ms")
    log_cleaner_enable: bool = default_of("log.cleaner.enable")
    log_cleaner_threads: int = default_of("log.cleaner.threads")
    log_cleaner_dedupe_buffer_size: int = default_of("log.cleaner.dedupe.buffer.size")
    log_cleaner_io_max_bytes_per_second: float = default_of("log.cleaner.io.max.bytes.per.second")
    log_cleaner_backoff_ms: int = default_of("log.cleaner.backoff.ms")
    offset_metadata_max_bytes: int = default_of("offset.metadata.max.bytes")
    offsets_commit_timeout_ms: int = default_of("offsets.commit.timeout.ms")
    group_min_session_timeout_ms: int = default_of("group.min.session.timeout.ms")
    group_max_session_timeout_ms: int = default_of("group.max.session.timeout.ms")
    group_initial_rebalance_delay_ms: int = default_of("group.initial.rebalance.delay.ms")
    transaction_max_timeout_ms: int = default_of("transaction.max.timeout.ms")
    rack_receipts_ttl_ms: int = default_of("rack.receipts.ttl.ms")
    transactional_id_expiration_ms: int = default_of("transactional.id.expiration.ms")
    transaction_two_phase_commit_enable: bool = default_of("transaction.two.phase.commit.enable")
    ssl_keystore_type: str = default_of("ssl.keystore.type")
    ssl_keystore_location: str | None = default_of("ssl.keystore.location")
    ssl_key_password: str | None = default_of("ssl.key.password")
    ssl_truststore_type: str = default_of("ssl.truststore.type")
    ssl_truststore_location: str | None = default_of("ssl.truststore.location")
    ssl_client_auth: str = default_of("ssl.client.auth")
    ssl_enabled_protocols: tuple[str, ...] = default_of("ssl.enabled.protocols")
    ssl_cipher_suites: tuple[str, ...] = default_of("ssl.cipher.suites")
    ssl_principal_mapping_rules: str = default_of("ssl.principal.mapping.rules")
    sasl_enabled_mechanisms: tuple[str, ...] = default_of("sasl.enabled.mechanisms")
    connections_max_reauth_ms: int = default_of("connections.max.reauth.ms")
    failed_authentication_delay_ms: int = default_of("connection.failed.authentication.delay.ms")
    authorizer_class_name: str = default_of("authorizer.class.name")
    super_users: str = default_of("super.users")
    allow_everyone_if_no_acl_found: bool = default_of("allow.everyone.if.no.acl.found")
    #: ``listener.name.<listener>.<setting>`` keys, lower-cased listener part (Kafka's per-listener settings)
    listener_settings: tuple[tuple[str, str], ...] = ()
    log: TopicConfig = field(default_factory=TopicConfig)  # every topic's defaults
    #: the settings server.properties and --override gave, as text (DescribeConfigs'
    #: STATIC_BROKER_CONFIG layer)
    given: tuple[tuple[str, str], ...] = ()

    @property
    def listener(self) -> Listener:
        """The first listener: the one single-address tools and messages name."""
        return self.listeners[0]

    def advertised_for(self, name: str) -> Listener | None:
        """The advertised address of listener ``name``; None when it advertises where it listens."""
        return next((a for a in self.advertised_listeners if a.name == name), None)

    @property
    def advertised_listener(self) -> Listener:
        return self.advertised_for(self.listener.name) or self.listener

    def security_protocol(self, listener_name: str) -> str:
        """The security protocol of listener ``name`` (the map is checked at load)."""
        return dict(self.security_protocol_map)[listener_name]

    def listener_setting(self, listener_name: str, key: str) -> str | None:
        """``listener.name.<listener>.<key>``, as the properties gave it (None: absent)."""
        wanted = f"listener.name.{listener_name.lower()}.{key}"
        return next((v for k, v in self.listener_settings if k == wanted), None)


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
    per_listener = {k.lower(): v for k, v in props.items() if k.lower().startswith(LISTENER_PREFIX)}
    props = {k: v for k, v in props.items() if not k.lower().startswith(LISTENER_PREFIX)}
    unknown = sorted(set(props) - KNOWN_KEYS)
    if unknown:
        log.warning("ignoring settings hmb does not have: %s", ", ".join(unknown))
    broker = resolve(props, BROKER_PROPERTIES)
    topic = resolve(props, TOPIC_PROPERTIES)
    _warn_not_acted_on({**broker, **topic})
    settings = dict(cfg.listener_settings) | per_listener
    given = {**dict(cfg.given), **{k: v for k, v in props.items() if k in KNOWN_KEYS}}
    new = replace(
        cfg,
        **_by_attr(broker),
        listener_settings=tuple(sorted(settings.items())),
        log=replace(cfg.log, **_by_attr(topic)),
        given=tuple(sorted(given.items())),
    )
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
    if cfg.log.max_compaction_lag_ms < cfg.log.min_compaction_lag_ms:
        raise ConfigError(
            "log.cleaner.max.compaction.lag.ms must be at least log.cleaner.min.compaction.lag.ms"
        )
    if cfg.group_max_session_timeout_ms < cfg.group_min_session_timeout_ms:
        raise ConfigError("group.max.session.timeout.ms must be at least group.min.session.timeout.ms")
    if not cfg.listeners:
        raise ConfigError("listeners: at least one listener is needed")
    mapped = dict(cfg.security_protocol_map)
    for listener in (*cfg.listeners, *cfg.advertised_listeners):
        if listener.name not in mapped:
            raise ConfigError(
                f"listener {listener.name} has no security protocol: add {listener.name}:PROTOCOL "
                "to listener.security.protocol.map"
            )
    names = {listener.name for listener in cfg.listeners}
    for listener in cfg.advertised_listeners:
        if listener.name not in names:
            raise ConfigError(f"advertised.listeners: {listener.name} is not one of the listeners")
    if cfg.inter_broker_listener_name is not None and cfg.inter_broker_listener_name.upper() not in names:
        raise ConfigError(
            f"inter.broker.listener.name: {cfg.inter_broker_listener_name} is not one of the listeners"
        )


def read_properties_file(path: Path) -> dict[str, str]:
    try:
        text = path.read_text()
    except OSError as exc:
        raise ConfigError(f"cannot read the config file {path}: {exc.strerror}") from None
    return parse_properties(text)


def load_file(path: Path, base: BrokerConfig | None = None) -> BrokerConfig:
    return from_properties(read_properties_file(path), base)
