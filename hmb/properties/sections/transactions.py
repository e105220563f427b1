"""The "Transactions" settings: The transaction coordinator's limits.

How to add one: see :mod:`hmb.properties.table`.
"""

from __future__ import annotations

from hmb.properties.model import (
    BOOLEAN,
    INT,
    Property,
)

TRANSACTIONS = "Transactions"

PROPERTIES: tuple[Property, ...] = (
    Property(
        "transaction.max.timeout.ms",
        INT,
        900_000,
        "The longest transaction.timeout.ms a transactional producer may ask for; a longer "
        "one is refused with INVALID_TRANSACTION_TIMEOUT.",
        TRANSACTIONS,
        attr="transaction_max_timeout_ms",
        at_least=1,
        unit="ms",
    ),
    Property(
        "transactional.id.expiration.ms",
        INT,
        604_800_000,
        "How long the coordinator keeps a transactional id whose producer sends no "
        "transaction; then the id is forgotten and its next producer starts at epoch 0.",
        TRANSACTIONS,
        attr="transactional_id_expiration_ms",
        at_least=1,
        unit="ms",
    ),
    Property(
        "transaction.two.phase.commit.enable",
        BOOLEAN,
        False,
        "Whether a transactional producer may take part in a two-phase commit run by an "
        "external transaction manager (KIP-939: InitProducerId with enable2Pc, a transaction "
        "that never times out); when false such a request is refused with "
        "TRANSACTIONAL_ID_AUTHORIZATION_FAILED.",
        TRANSACTIONS,
        attr="transaction_two_phase_commit_enable",
    ),
)
