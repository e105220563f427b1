"""The codes of Kafka's ACL model as the ACL requests carry them: resource types,
pattern types, operations and permissions, with kafka-acls.sh's names; and the
SCRAM mechanisms' numbers of the SCRAM credential requests.

Broker and client both read and write these numbers, so they live with the
codec.  ``parse_enum`` reads the names the tools take (``Read``,
``transactional-id``, ``IdempotentWrite``); ``enum_name`` writes Kafka's
spelling back (``TransactionalId``).
"""

from __future__ import annotations

import enum
from typing import TypeVar

E = TypeVar("E", bound=enum.IntEnum)

#: SCRAM mechanisms by name -> the number the SCRAM credential requests carry
SCRAM_MECHANISMS = {"SCRAM-SHA-256": 1, "SCRAM-SHA-512": 2}


class ResourceType(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


class Operation(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14
    TWO_PHASE_COMMIT = 15  # KIP-939: on a transactional id, InitProducerId with enable2Pc


class Permission(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


def enum_name(value: enum.IntEnum) -> str:
    """Kafka's spelling of an enum value: ``TRANSACTIONAL_ID`` -> ``TransactionalId``."""
    return "".join(part.capitalize() for part in value.name.split("_"))


def parse_enum(cls: type[E], text: str) -> E:
    """A kafka-acls.sh name (``Read``, ``transactional-id``, ``IdempotentWrite``) as the enum."""
    wanted = text.replace("-", "").replace("_", "").lower()
    for member in cls:
        if member.name.replace("_", "").lower() == wanted:
            return member
    raise ValueError(f"unknown {cls.__name__} {text!r}")
