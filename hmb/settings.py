"""The broker's and the topics' settings as the configuration APIs see and change them.

Three kinds of resource, as Kafka's DescribeConfigs/AlterConfigs name them:

* a topic: its overrides (stored by the log, :mod:`hmb.log.settings_store`)
  on top of the broker's values;
* this broker (resource name = its node id): settings changed at run time for
  it alone;
* the cluster-wide default broker (resource name ``""``): settings changed at
  run time for every broker.

Rules:

* Precedence is Kafka's: topic override > this broker's dynamic value > the
  cluster-wide dynamic default > server.properties/``--override`` > the
  table's default (:mod:`hmb.properties.describe` reports every layer).
* Only settings a topic can override may change at run time (Kafka's dynamic
  log settings); a change takes effect at once, in every topic that does not
  override it, and is stored so that it survives a restart.
* A change is checked whole before anything is stored: one bad setting and
  the resource is left as it was (``validate_only`` stops after the checks).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from hmb.log.settings_store import SettingsStore
from hmb.properties import TOPIC_PROPERTIES
from hmb.properties.describe import (
    Entry,
    Layers,
    Source,
    broker_entries,
    check_dynamic_broker,
    check_topic_overrides,
    topic_entries,
)

if TYPE_CHECKING:
    from hmb.config import BrokerConfig
    from hmb.log.manager import LogManager

BROKER_CONFIGS = "broker-configs"  # the directory of dynamic broker settings, in the first log dir
CLUSTER_DEFAULT = "cluster-default"  # the stored name of the cluster-wide default resource


class UnknownResourceError(LookupError):
    """No such topic, or a broker resource that is not this broker."""


class Settings:
    def __init__(self, config: BrokerConfig, logs: LogManager) -> None:
        self.config = config
        self.logs = logs
        self.static = dict(config.given)
        self.dynamic = SettingsStore(logs.log_dirs[0] / BROKER_CONFIGS)
        #: told of every topic change made through this broker (a cluster shares it through
        #: ZooKeeper's /config/topics); None alone
        self.topic_changed: Callable[[str, dict[str, str]], None] | None = None

    def load(self) -> None:
        """Read the stored dynamic settings and apply them (after the log is loaded)."""
        self.dynamic.load()
        self._apply()

    # ---------------------------------------------------------------- layers

    @property
    def broker_name(self) -> str:
        return str(self.config.node_id)

    def _stored_name(self, name: str) -> str:
        """A broker resource's stored name; UnknownResourceError for another broker."""
        if name == "":
            return CLUSTER_DEFAULT
        if name != self.broker_name:
            raise UnknownResourceError(
                f"Unexpected broker id, expected {self.broker_name} or empty string, but received {name}"
            )
        return name

    def _layers(self, topic: str | None = None) -> Layers:
        return Layers(
            topic=self.logs.topic_configs.overrides(topic) if topic is not None else {},
            broker=self.dynamic.overrides(self.broker_name),
            cluster=self.dynamic.overrides(CLUSTER_DEFAULT),
            static=self.static,
        )

    def _apply(self) -> None:
        """Give the log the broker-wide topic defaults the dynamic layers make."""
        layers = self._layers()
        changes = {}
        for prop in TOPIC_PROPERTIES:
            for values in (layers.broker, layers.cluster):
                name = next((n for n in prop.names if n in values), None)
                if name is not None:
                    changes[prop.attr] = prop.parse(name, values[name])
                    break
        self.logs.set_defaults(replace(self.config.log, **changes))

    # ---------------------------------------------------------------- describing

    def describe_topic(self, topic: str) -> list[Entry]:
        if topic not in self.logs.topics:
            raise UnknownResourceError(f"topic {topic!r} does not exist")
        return topic_entries(self._layers(topic))

    def describe_new_topic(self, overrides: Mapping[str, str]) -> list[Entry]:
        """The settings a topic made with ``overrides`` would have (CreateTopics v5+, validating)."""
        return topic_entries(replace(self._layers(), topic=dict(overrides)))

    def describe_broker(self, name: str) -> list[Entry]:
        """This broker's settings; for ``""`` the cluster-wide dynamic defaults only, as Kafka."""
        stored = self._stored_name(name)
        if stored == CLUSTER_DEFAULT:
            defaults = broker_entries(Layers(cluster=self.dynamic.overrides(CLUSTER_DEFAULT)))
            return [
                replace(e, synonyms=e.synonyms[:1])
                for e in defaults
                if e.source == Source.DYNAMIC_DEFAULT_BROKER_CONFIG
            ]
        return broker_entries(self._layers())

    def topic_overrides(self, topic: str) -> dict[str, str]:
        if topic not in self.logs.topics:
            raise UnknownResourceError(f"topic {topic!r} does not exist")
        return self.logs.topic_configs.overrides(topic)

    def broker_values(self, name: str) -> dict[str, str]:
        return self.dynamic.overrides(self._stored_name(name))

    # ---------------------------------------------------------------- changing

    def set_topic(self, topic: str, overrides: Mapping[str, str], *, validate_only: bool = False) -> None:
        """Replace ``topic``'s overrides (ConfigError, nothing changed, for a bad one)."""
        if topic not in self.logs.topics:
            raise UnknownResourceError(f"topic {topic!r} does not exist")
        check_topic_overrides(overrides)
        self.logs.config.with_overrides(overrides)
        if not validate_only:
            self.logs.set_topic_overrides(topic, overrides)
            if self.topic_changed is not None:
                self.topic_changed(topic, dict(overrides))

    def set_broker(self, name: str, values: Mapping[str, str], *, validate_only: bool = False) -> None:
        """Replace a broker resource's dynamic settings (ConfigError, nothing changed, when refused)."""
        stored = self._stored_name(name)
        check_dynamic_broker(values)
        if not validate_only:
            self.dynamic.set(stored, values)
            self._apply()
