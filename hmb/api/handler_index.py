"""Where each API key's handler lives and the versions it serves: the handlers'
``@handles`` declarations, written here by ``python scripts/gen_kproto_messages.py --readme README.md``.
Do not edit: change the declaration and run that command (the registry test fails until this
file agrees with the code).

The broker builds its registry from this table (:mod:`hmb.api.registry`), so it answers
ApiVersions without importing the handler modules; each is imported when its key is first
spoken.
"""

from __future__ import annotations

from kproto.api_keys import ApiKey

INDEX: tuple[tuple[ApiKey, str, int, int], ...] = (
    (ApiKey.PRODUCE, "produce", 0, 13),
    (ApiKey.FETCH, "fetch", 0, 18),
    (ApiKey.LIST_OFFSETS, "list_offsets", 0, 11),
    (ApiKey.METADATA, "metadata", 0, 13),
    (ApiKey.CONTROLLED_SHUTDOWN, "controlled_shutdown", 0, 3),
    (ApiKey.OFFSET_COMMIT, "offset_commit", 0, 10),
    (ApiKey.OFFSET_FETCH, "offset_fetch", 0, 10),
    (ApiKey.FIND_COORDINATOR, "find_coordinator", 0, 6),
    (ApiKey.JOIN_GROUP, "join_group", 0, 9),
    (ApiKey.HEARTBEAT, "heartbeat", 0, 4),
    (ApiKey.LEAVE_GROUP, "leave_group", 0, 5),
    (ApiKey.SYNC_GROUP, "sync_group", 0, 5),
    (ApiKey.DESCRIBE_GROUPS, "describe_groups", 0, 6),
    (ApiKey.LIST_GROUPS, "list_groups", 0, 5),
    (ApiKey.SASL_HANDSHAKE, "sasl_handshake", 0, 1),
    (ApiKey.API_VERSIONS, "api_versions", 0, 4),
    (ApiKey.CREATE_TOPICS, "create_topics", 0, 7),
    (ApiKey.DELETE_TOPICS, "delete_topics", 0, 6),
    (ApiKey.DELETE_RECORDS, "delete_records", 0, 2),
    (ApiKey.INIT_PRODUCER_ID, "init_producer_id", 0, 6),
    (ApiKey.OFFSET_FOR_LEADER_EPOCH, "offset_for_leader_epoch", 2, 4),
    (ApiKey.ADD_PARTITIONS_TO_TXN, "add_partitions_to_txn", 0, 5),
    (ApiKey.ADD_OFFSETS_TO_TXN, "add_offsets_to_txn", 0, 4),
    (ApiKey.END_TXN, "end_txn", 0, 5),
    (ApiKey.WRITE_TXN_MARKERS, "write_txn_markers", 1, 2),
    (ApiKey.TXN_OFFSET_COMMIT, "txn_offset_commit", 0, 5),
    (ApiKey.DESCRIBE_ACLS, "describe_acls", 1, 3),
    (ApiKey.CREATE_ACLS, "create_acls", 1, 3),
    (ApiKey.DELETE_ACLS, "delete_acls", 1, 3),
    (ApiKey.DESCRIBE_CONFIGS, "describe_configs", 1, 4),
    (ApiKey.ALTER_CONFIGS, "alter_configs", 0, 2),
    (ApiKey.DESCRIBE_LOG_DIRS, "describe_log_dirs", 1, 5),
    (ApiKey.SASL_AUTHENTICATE, "sasl_authenticate", 0, 2),
    (ApiKey.CREATE_PARTITIONS, "create_partitions", 0, 3),
    (ApiKey.DELETE_GROUPS, "delete_groups", 0, 2),
    (ApiKey.ELECT_LEADERS, "elect_leaders", 0, 2),
    (ApiKey.INCREMENTAL_ALTER_CONFIGS, "incremental_alter_configs", 0, 1),
    (ApiKey.OFFSET_DELETE, "offset_delete", 0, 0),
    (ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, "describe_user_scram_credentials", 0, 0),
    (ApiKey.ALTER_USER_SCRAM_CREDENTIALS, "alter_user_scram_credentials", 0, 0),
    (ApiKey.DESCRIBE_CLUSTER, "describe_cluster", 0, 2),
    (ApiKey.DESCRIBE_PRODUCERS, "describe_producers", 0, 0),
    (ApiKey.DESCRIBE_TRANSACTIONS, "describe_transactions", 0, 0),
    (ApiKey.LIST_TRANSACTIONS, "list_transactions", 0, 2),
)
"""(key, module in hmb.api, lowest version served, highest version served), by key."""
