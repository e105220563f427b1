"""The broker's settings, declared once (:mod:`hmb.properties.table`), and what reads them.

``model`` holds the vocabulary (kinds, the ``Property`` record, parsing and
precedence), ``table`` the declarations, ``render`` the ``--help`` text and the
README tables.  Nothing here imports the rest of hmb, so both the broker's
configuration (hmb.config) and a topic's (hmb.log.config) are built from it.
"""

from hmb.properties.model import (
    NEVER,
    ConfigError,
    Listener,
    Property,
    Synonym,
    as_text,
    known_names,
    parse_listener,
    resolve,
    resolve_topic,
)
from hmb.properties.table import BROKER_PROPERTIES, BY_NAME, PROPERTIES, TOPIC_PROPERTIES, default_of

__all__ = [
    "BROKER_PROPERTIES",
    "BY_NAME",
    "NEVER",
    "PROPERTIES",
    "TOPIC_PROPERTIES",
    "ConfigError",
    "Listener",
    "Property",
    "Synonym",
    "as_text",
    "default_of",
    "known_names",
    "parse_listener",
    "resolve",
    "resolve_topic",
]
