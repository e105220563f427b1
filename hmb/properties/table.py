"""Every broker setting, declared once: the table that parsing, ``hmb serve --help``,
the README's settings list and the typed configs (``BrokerConfig``, ``TopicConfig``)
are all built from.

The table is assembled from one module per section
(:mod:`hmb.properties.sections`), in the order they are listed here.

How to add a broker setting: append a :class:`Property` to ``PROPERTIES`` of
its section's module, with Kafka's name, its kind, Kafka's default (where hmb
deliberately differs, put Kafka's value in ``kafka_default`` and the reason in
``doc``), the checks one value needs (``at_least``, ``choices``, what a
negative number means), a ``doc`` of one or two sentences (the first is the
``--help`` line), synonyms of lower precedence (with the factor of their unit),
and ``attr``, the attribute that holds the value.  A broker-wide setting gets a
field of that name on ``BrokerConfig`` (hmb/config.py); a setting a topic can
override also gets ``topic=`` (Kafka's topic-level name) and its field goes on
``TopicConfig`` (hmb/log/config.py) instead; either way the field's default is
``default_of(name)``.  While hmb accepts a setting without acting on values
other than the default, mark it ``acted_on=False`` (a start warns when such a
setting is changed).  A rule between two settings (a minimum below a maximum)
goes in ``check_relations`` in hmb/config.py.  Then run ``python -m
hmb.properties --readme README.md``; ``--help`` follows by itself, and
tests/hmb/test_properties.py fails until the dataclasses, the table and the
README agree.
"""

from __future__ import annotations

from typing import Any

from hmb.properties.model import Property
from hmb.properties.sections import (
    broker,
    cluster,
    compaction,
    groups,
    log,
    network,
    rack,
    security,
    transactions,
)

PROPERTIES: tuple[Property, ...] = (
    *network.PROPERTIES,
    *broker.PROPERTIES,
    *cluster.PROPERTIES,
    *log.PROPERTIES,
    *compaction.PROPERTIES,
    *security.PROPERTIES,
    *groups.PROPERTIES,
    *transactions.PROPERTIES,
    *rack.PROPERTIES,
)

SECTIONS = (
    network.NETWORK,
    security.SECURITY,
    broker.BROKER,
    cluster.CLUSTER,
    log.LOG,
    compaction.COMPACTION,
    groups.GROUPS,
    transactions.TRANSACTIONS,
    rack.RACK,
)
BY_NAME = {p.name: p for p in PROPERTIES}
BROKER_PROPERTIES = tuple(p for p in PROPERTIES if p.topic is None)
TOPIC_PROPERTIES = tuple(p for p in PROPERTIES if p.topic is not None)


def default_of(name: str) -> Any:
    """The table's default for ``name``: what the config dataclasses declare as theirs."""
    return BY_NAME[name].default
