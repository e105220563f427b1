"""Every broker setting, declared once: the table that parsing, ``hmb serve --help``,
the README's settings list and the typed configs (``BrokerConfig``, ``TopicConfig``)
are all built from.

How to add a broker setting: append a :class:`Property` to ``PROPERTIES`` under
its section, with Kafka's name, its kind, Kafka's default (where hmb
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

from pathlib import Path
from typing import Any

from hmb.properties.model import (
    BOOLEAN,
    DIRECTORIES,
    INT,
    LIST,
    LISTENER,
    LISTENERS,
    LONG,
    NEVER,
    POSITIVE_DOUBLE,
    PROTOCOL_MAP,
    RATIO,
    STRING,
    Listener,
    Property,
    Synonym,
)

NETWORK = "Network"
BROKER = "Broker"
LOG = "Log and topic defaults"
COMPACTION = "Log compaction"
GROUPS = "Consumer groups"
CLUSTER = "Cluster (ZooKeeper)"
TRANSACTIONS = "Transactions"
SECURITY = "Security"

_HOUR_MS = 3_600_000
_WEEK_MS = 168 * _HOUR_MS

PROPERTIES: tuple[Property, ...] = (
    # -------------------------------------------------------------------- network
    Property(
        "listeners",
        LISTENERS,
        (Listener("127.0.0.1", 9092),),
        "The addresses the broker listens on, as `NAME://host:port` entries (a bare "
        "`host:port` is PLAINTEXT; port 0: any free port); each name's security protocol is "
        "in listener.security.protocol.map. Kafka listens on every interface; hmb on the "
        "loopback one, so a broker started for development is not reachable from the network "
        "by surprise.",
        NETWORK,
        attr="listeners",
        kafka_default="PLAINTEXT://:9092",
    ),
    Property(
        "advertised.listeners",
        LISTENERS,
        (),
        "The addresses clients are told to connect to, by listener name, when they are not "
        "the ones the broker listens on (behind NAT, in a container).",
        NETWORK,
        attr="advertised_listeners",
        shown_default="the listeners",
    ),
    Property(
        "listener.security.protocol.map",
        PROTOCOL_MAP,
        (
            ("PLAINTEXT", "PLAINTEXT"),
            ("SSL", "SSL"),
            ("SASL_PLAINTEXT", "SASL_PLAINTEXT"),
            ("SASL_SSL", "SASL_SSL"),
        ),
        "The security protocol of each listener name, as `NAME:PROTOCOL` pairs "
        "(PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL).",
        NETWORK,
        attr="security_protocol_map",
    ),
    Property(
        "inter.broker.listener.name",
        STRING,
        None,
        "The listener other brokers would use; it must be one of the listeners. hmb is a "
        "single broker, so nothing connects to it yet.",
        NETWORK,
        attr="inter_broker_listener_name",
        shown_default="the first listener",
    ),
    Property(
        "control.listener",
        LISTENER,
        None,
        "Where the test-control endpoint listens (hmb's own, no Kafka setting): JSON lines to "
        "inspect the broker, inject faults, move its clock, seed and snapshot it; off unless set. "
        "Give a loopback address (`127.0.0.1:PORT`); once the broker has security, a connection "
        "must first log in as one of super.users.",
        NETWORK,
        attr="control_listener",
        shown_default="off",
    ),
    Property(
        "socket.request.max.bytes",
        INT,
        104_857_600,
        "The largest request the broker reads; a connection sending a larger one is closed.",
        NETWORK,
        attr="socket_request_max_bytes",
        at_least=1024,
        unit="bytes",
    ),
    Property(
        "queued.max.requests",
        INT,
        500,
        "How many requests may wait for their turn before the broker stops reading more. "
        "Kafka counts them for the whole broker, hmb for each connection.",
        NETWORK,
        attr="queued_max_requests",
        at_least=1,
    ),
    # -------------------------------------------------------------------- broker
    Property(
        "node.id",
        INT,
        0,
        "The broker's id, as clients see it in Metadata; broker.id, its ZooKeeper-mode name, "
        "is the same setting. Alone hmb takes 0, where Kafka's -1 means no id has been given "
        "yet; in a cluster (zookeeper.connect) every broker needs its own.",
        BROKER,
        attr="node_id",
        synonyms=(Synonym("broker.id"),),
        kafka_default="-1",
    ),
    Property(
        "num.partitions",
        INT,
        1,
        "The partition count of a topic created without one (auto-created, or CreateTopics with -1).",
        BROKER,
        attr="num_partitions",
        at_least=1,
    ),
    Property(
        "auto.create.topics.enable",
        BOOLEAN,
        True,
        "Create a topic when a client asks for the metadata of one that does not exist.",
        BROKER,
        attr="auto_create_topics",
    ),
    # -------------------------------------------------------------------- cluster
    Property(
        "zookeeper.connect",
        STRING,
        None,
        "The ZooKeeper ensemble the cluster is coordinated by, as host:port[,host:port...] with "
        "an optional /chroot after the last port. Unset, the broker runs alone, as a cluster "
        "of one that needs no ZooKeeper.",
        CLUSTER,
        attr="zookeeper_connect",
        shown_default="none (alone)",
    ),
    Property(
        "zookeeper.session.timeout.ms",
        INT,
        18000,
        "How long ZooKeeper keeps the broker's session (its registration, and the controller "
        "role if it holds it) after it stops hearing from it.",
        CLUSTER,
        attr="zookeeper_session_timeout_ms",
        at_least=1,
        unit="ms",
    ),
    Property(
        "zookeeper.connection.timeout.ms",
        INT,
        18000,
        "How long the broker waits to connect to ZooKeeper at start before it gives up; Kafka's "
        "default is zookeeper.session.timeout.ms, the value here.",
        CLUSTER,
        attr="zookeeper_connection_timeout_ms",
        at_least=1,
        unit="ms",
    ),
    Property(
        "broker.rack",
        STRING,
        None,
        "The rack (or availability zone) of this broker: replica placement spreads each "
        "partition over racks, and Metadata tells clients.",
        CLUSTER,
        attr="broker_rack",
        shown_default="none",
    ),
    Property(
        "default.replication.factor",
        INT,
        1,
        "The replication factor of a topic created without one (auto-created, or CreateTopics with -1).",
        CLUSTER,
        attr="default_replication_factor",
        at_least=1,
        acted_on=False,
    ),
    Property(
        "offsets.topic.replication.factor",
        INT,
        1,
        "The replication factor of __consumer_offsets. Kafka's is 3; until hmb replicates "
        "data a cluster keeps its committed offsets once.",
        CLUSTER,
        attr="offsets_topic_replication_factor",
        at_least=1,
        kafka_default="3",
        acted_on=False,
    ),
    Property(
        "offsets.topic.num.partitions",
        INT,
        1,
        "The partition count of __consumer_offsets; a group's coordinator is the leader of "
        "the partition its id hashes to. Kafka's is 50; hmb keeps committed offsets in one.",
        CLUSTER,
        attr="offsets_topic_num_partitions",
        at_least=1,
        kafka_default="50",
        acted_on=False,
    ),
    Property(
        "replica.lag.time.max.ms",
        INT,
        30000,
        "How long a follower may go without catching up before the leader drops it from the "
        "in-sync replicas. Only partitions with one replica exist until replication lands.",
        CLUSTER,
        attr="replica_lag_time_max_ms",
        at_least=1,
        unit="ms",
        acted_on=False,
    ),
    Property(
        "unclean.leader.election.enable",
        BOOLEAN,
        False,
        "Whether a replica outside the in-sync set may become leader (losing records) when "
        "no in-sync one is alive. With one replica a dead leader's partition waits for it.",
        CLUSTER,
        attr="unclean_leader_election_enable",
        acted_on=False,
    ),
    # -------------------------------------------------------------------- log
    Property(
        "log.dirs",
        DIRECTORIES,
        (Path("hmb-data"),),
        "The directories partitions are stored in, in Kafka's layout. The default is "
        "relative to the working directory rather than under /tmp, so data outlives a reboot.",
        LOG,
        attr="log_dirs",
        synonyms=(Synonym("log.dir"),),
        kafka_default="/tmp/kafka-logs",
    ),
    Property(
        "num.recovery.threads.per.data.dir",
        INT,
        1,
        "Worker threads per log dir that read the partitions' files after a clean shutdown, in "
        "the background while the broker already answers. After an unclean one every last "
        "segment is validated before the broker listens, one partition after another.",
        LOG,
        attr="num_recovery_threads_per_data_dir",
        at_least=1,
    ),
    Property(
        "log.retention.check.interval.ms",
        LONG,
        300_000,
        "How often the broker looks for segments past their retention time or size.",
        LOG,
        attr="retention_check_interval_ms",
        unit="ms",
    ),
    Property(
        "log.segment.bytes",
        INT,
        1 << 30,
        "The size at which a partition's active segment is closed and a new one started.",
        LOG,
        attr="segment_bytes",
        topic="segment.bytes",
        at_least=1024,
        unit="bytes",
    ),
    Property(
        "log.roll.ms",
        LONG,
        _WEEK_MS,
        "The age at which a segment is closed even when it is not full.",
        LOG,
        attr="segment_ms",
        topic="segment.ms",
        synonyms=(Synonym("log.roll.hours", _HOUR_MS),),
        at_least=1,
        unit="ms",
    ),
    Property(
        "log.index.interval.bytes",
        INT,
        4096,
        "How many bytes of records lie between two entries of a segment's offset index.",
        LOG,
        attr="index_interval_bytes",
        topic="index.interval.bytes",
        at_least=0,
        unit="bytes",
    ),
    Property(
        "log.index.size.max.bytes",
        INT,
        10 << 20,
        "The largest offset index, and time index, of a segment; a segment with a full index is closed.",
        LOG,
        attr="index_max_bytes",
        topic="segment.index.bytes",
        at_least=8,
        unit="bytes",
    ),
    Property(
        "log.retention.ms",
        LONG,
        _WEEK_MS,
        "How long a closed segment is kept after its last write; -1 keeps it forever.",
        LOG,
        attr="retention_ms",
        topic="retention.ms",
        synonyms=(Synonym("log.retention.minutes", 60_000), Synonym("log.retention.hours", _HOUR_MS)),
        negative=-1,
        unit="ms",
    ),
    Property(
        "log.retention.bytes",
        LONG,
        -1,
        "How many bytes a partition keeps before its oldest segments are deleted; -1: no limit.",
        LOG,
        attr="retention_bytes",
        topic="retention.bytes",
        negative=-1,
        unit="bytes",
    ),
    Property(
        "message.max.bytes",
        INT,
        1_048_588,
        "The largest record batch a producer may write.",
        LOG,
        attr="max_message_bytes",
        topic="max.message.bytes",
        at_least=0,
        unit="bytes",
    ),
    Property(
        "log.flush.interval.messages",
        LONG,
        NEVER,
        "How many messages a partition takes before it is fsynced; -1: never. Like Kafka, "
        "the broker leaves writing back to the page cache by default; 1 fsyncs every append.",
        LOG,
        attr="flush_interval_messages",
        topic="flush.messages",
        at_least=1,
        negative=NEVER,
        shown_default="never",
    ),
    Property(
        "log.flush.interval.ms",
        LONG,
        NEVER,
        "How long written messages may stay in the page cache before the partition is "
        "fsynced; -1: no time limit.",
        LOG,
        attr="flush_interval_ms",
        topic="flush.ms",
        negative=NEVER,
        unit="ms",
        shown_default="never",
    ),
    Property(
        "log.cleanup.policy",
        LIST,
        ("delete",),
        "What becomes of old records: `delete` removes whole segments past retention, "
        "`compact` keeps the latest record of each key (the log cleaner); `compact,delete` "
        "does both. A compacted topic refuses records without a key.",
        LOG,
        attr="cleanup_policy",
        topic="cleanup.policy",
        choices=("delete", "compact"),
    ),
    # -------------------------------------------------------------------- compaction
    Property(
        "log.cleaner.enable",
        BOOLEAN,
        True,
        "Whether the log cleaner runs; without it compacted topics only grow.",
        COMPACTION,
        attr="log_cleaner_enable",
    ),
    Property(
        "log.cleaner.threads",
        INT,
        1,
        "How many background threads clean logs, each one partition at a time.",
        COMPACTION,
        attr="log_cleaner_threads",
        at_least=0,
    ),
    Property(
        "log.cleaner.dedupe.buffer.size",
        LONG,
        134_217_728,
        "Memory for the cleaners' maps of key hash to latest offset, shared by the threads; "
        "each entry counts 24 bytes (a 16-byte MD5 of the key and an offset), as Kafka counts "
        "them. A log with more keys than fit is cleaned in several passes.",
        COMPACTION,
        attr="log_cleaner_dedupe_buffer_size",
        at_least=1024,
        unit="bytes",
    ),
    Property(
        "log.cleaner.io.max.bytes.per.second",
        POSITIVE_DOUBLE,
        1.7976931348623157e308,
        "The most bytes per second the cleaners read and write together; the default is no limit.",
        COMPACTION,
        attr="log_cleaner_io_max_bytes_per_second",
        shown_default="no limit",
    ),
    Property(
        "log.cleaner.backoff.ms",
        LONG,
        15_000,
        "How long a cleaner thread sleeps when no log needs cleaning.",
        COMPACTION,
        attr="log_cleaner_backoff_ms",
        at_least=0,
        unit="ms",
    ),
    Property(
        "log.cleaner.delete.retention.ms",
        LONG,
        86_400_000,
        "How long a tombstone (a record with a null value) of a compacted topic stays readable "
        "after the cleaner first passes it, so that a consumer reading from the start sees it.",
        COMPACTION,
        attr="delete_retention_ms",
        topic="delete.retention.ms",
        at_least=0,
        unit="ms",
    ),
    Property(
        "log.cleaner.min.compaction.lag.ms",
        LONG,
        0,
        "How old a record must be before the cleaner may remove an earlier record of its key.",
        COMPACTION,
        attr="min_compaction_lag_ms",
        topic="min.compaction.lag.ms",
        at_least=0,
        unit="ms",
    ),
    Property(
        "log.cleaner.max.compaction.lag.ms",
        LONG,
        2**63 - 1,
        "How long a record may stay uncompacted: a log with older dirty records is cleaned "
        "whatever its dirty ratio.",
        COMPACTION,
        attr="max_compaction_lag_ms",
        topic="max.compaction.lag.ms",
        at_least=1,
        unit="ms",
        shown_default="no limit",
    ),
    Property(
        "log.cleaner.min.cleanable.ratio",
        RATIO,
        0.5,
        "The share of a log's bytes that must be dirty (written since the last cleaning) "
        "before the cleaner takes it.",
        COMPACTION,
        attr="min_cleanable_dirty_ratio",
        topic="min.cleanable.dirty.ratio",
    ),
    Property(
        "log.message.timestamp.type",
        STRING,
        "CreateTime",
        "Which timestamp a record keeps: the producer's (`CreateTime`) or the broker's when "
        "it appends the record (`LogAppendTime`).",
        LOG,
        attr="message_timestamp_type",
        topic="message.timestamp.type",
        choices=("CreateTime", "LogAppendTime"),
    ),
    Property(
        "log.message.timestamp.before.max.ms",
        LONG,
        NEVER,
        "How far in the past (by the broker's clock) a CreateTime record's timestamp may lie; "
        "a batch holding an older one is refused with INVALID_TIMESTAMP.",
        LOG,
        attr="message_timestamp_before_max_ms",
        topic="message.timestamp.before.max.ms",
        at_least=0,
        unit="ms",
        shown_default="no limit",
    ),
    Property(
        "log.message.timestamp.after.max.ms",
        LONG,
        _HOUR_MS,
        "How far in the future (by the broker's clock) a CreateTime record's timestamp may lie; "
        "a batch holding a later one is refused with INVALID_TIMESTAMP.",
        LOG,
        attr="message_timestamp_after_max_ms",
        topic="message.timestamp.after.max.ms",
        at_least=0,
        unit="ms",
    ),
    Property(
        "compression.type",
        STRING,
        "producer",
        "The codec record batches are stored with: `producer` keeps the producer's; "
        "`uncompressed` or a codec makes the broker recompress every batch in another codec.",
        LOG,
        attr="compression_type",
        topic="compression.type",
        choices=("producer", "uncompressed", "gzip", "snappy", "lz4", "zstd"),
    ),
    Property(
        "min.insync.replicas",
        INT,
        1,
        "How many replicas must hold a write before an `acks=all` produce is answered; "
        "hmb is a single broker, whose one replica is always in sync.",
        LOG,
        attr="min_insync_replicas",
        topic="min.insync.replicas",
        at_least=1,
        acted_on=False,
    ),
    # -------------------------------------------------------------------- security
    Property(
        "ssl.keystore.type",
        STRING,
        "PEM",
        "The format of the keystore; hmb reads PEM files (certificate chain and private key).",
        SECURITY,
        attr="ssl_keystore_type",
        choices=("PEM",),
        kafka_default="JKS",
    ),
    Property(
        "ssl.keystore.location",
        STRING,
        None,
        "The PEM file with the broker's certificate chain and private key, for SSL and SASL_SSL listeners.",
        SECURITY,
        attr="ssl_keystore_location",
        shown_default="none",
    ),
    Property(
        "ssl.key.password",
        STRING,
        None,
        "The password of the private key in the keystore, when it is encrypted.",
        SECURITY,
        attr="ssl_key_password",
        synonyms=(Synonym("ssl.keystore.password"),),
        shown_default="none",
    ),
    Property(
        "ssl.truststore.type",
        STRING,
        "PEM",
        "The format of the truststore; hmb reads PEM files of CA certificates.",
        SECURITY,
        attr="ssl_truststore_type",
        choices=("PEM",),
        kafka_default="JKS",
    ),
    Property(
        "ssl.truststore.location",
        STRING,
        None,
        "The PEM file of the CA certificates client certificates are checked against.",
        SECURITY,
        attr="ssl_truststore_location",
        shown_default="none",
    ),
    Property(
        "ssl.client.auth",
        STRING,
        "none",
        "Whether a TLS client must show a certificate: `required`, `requested` (checked when "
        "shown) or `none`.",
        SECURITY,
        attr="ssl_client_auth",
        choices=("none", "requested", "required"),
    ),
    Property(
        "ssl.enabled.protocols",
        LIST,
        ("TLSv1.2", "TLSv1.3"),
        "The TLS versions the broker accepts.",
        SECURITY,
        attr="ssl_enabled_protocols",
        choices=("TLSv1.2", "TLSv1.3"),
    ),
    Property(
        "ssl.cipher.suites",
        LIST,
        (),
        "The cipher suites the broker offers (OpenSSL or IANA names); empty: the TLS library's defaults.",
        SECURITY,
        attr="ssl_cipher_suites",
        shown_default="the defaults",
    ),
    Property(
        "ssl.principal.mapping.rules",
        STRING,
        "DEFAULT",
        "Rules turning a client certificate's subject into a user name, as Kafka's "
        "`RULE:pattern/replacement/[LU]` list ending in `DEFAULT` (the whole subject).",
        SECURITY,
        attr="ssl_principal_mapping_rules",
    ),
    Property(
        "sasl.enabled.mechanisms",
        LIST,
        ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"),
        "The SASL mechanisms SASL listeners offer. Kafka's default is GSSAPI (Kerberos), "
        "which hmb does not have.",
        SECURITY,
        attr="sasl_enabled_mechanisms",
        kafka_default="GSSAPI",
    ),
    Property(
        "connections.max.reauth.ms",
        LONG,
        0,
        "How long a SASL authentication lasts before the client must authenticate again; 0: "
        "for the connection's life.",
        SECURITY,
        attr="connections_max_reauth_ms",
        at_least=0,
        unit="ms",
    ),
    Property(
        "connection.failed.authentication.delay.ms",
        INT,
        100,
        "How long a failed authentication waits before it is answered, so that guessing passwords is slow.",
        SECURITY,
        attr="failed_authentication_delay_ms",
        at_least=0,
        unit="ms",
    ),
    Property(
        "authorizer.class.name",
        STRING,
        "",
        "The authoriser: empty for none (everything is allowed), or Kafka's "
        "`org.apache.kafka.metadata.authorizer.StandardAuthorizer` for hmb's ACLs.",
        SECURITY,
        attr="authorizer_class_name",
        choices=(
            "",
            "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "kafka.security.authorizer.AclAuthorizer",
        ),
        shown_default="none",
    ),
    Property(
        "super.users",
        STRING,
        "",
        "Principals the authoriser allows everything, separated by `;` (`User:admin;User:ops`).",
        SECURITY,
        attr="super_users",
        shown_default="none",
    ),
    Property(
        "allow.everyone.if.no.acl.found",
        BOOLEAN,
        False,
        "Whether a resource no ACL matches is open to everyone (true) or to super users only.",
        SECURITY,
        attr="allow_everyone_if_no_acl_found",
    ),
    # -------------------------------------------------------------------- consumer groups
    Property(
        "offset.metadata.max.bytes",
        INT,
        4096,
        "The longest metadata string a consumer may commit with an offset.",
        GROUPS,
        attr="offset_metadata_max_bytes",
        unit="bytes",
    ),
    Property(
        "group.min.session.timeout.ms",
        INT,
        6000,
        "The shortest session timeout a consumer may join a group with.",
        GROUPS,
        attr="group_min_session_timeout_ms",
        at_least=0,
        unit="ms",
    ),
    Property(
        "group.max.session.timeout.ms",
        INT,
        1_800_000,
        "The longest session timeout a consumer may join a group with.",
        GROUPS,
        attr="group_max_session_timeout_ms",
        unit="ms",
    ),
    Property(
        "group.initial.rebalance.delay.ms",
        INT,
        0,
        "How long a new group waits for more members before its first assignment. Kafka "
        "waits 3 s; without the wait a consumer gets its partitions in well under a second.",
        GROUPS,
        attr="group_initial_rebalance_delay_ms",
        at_least=0,
        unit="ms",
        kafka_default="3000",
    ),
    # -------------------------------------------------------------------- transactions
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
)

SECTIONS = (NETWORK, SECURITY, BROKER, CLUSTER, LOG, COMPACTION, GROUPS, TRANSACTIONS)
BY_NAME = {p.name: p for p in PROPERTIES}
BROKER_PROPERTIES = tuple(p for p in PROPERTIES if p.topic is None)
TOPIC_PROPERTIES = tuple(p for p in PROPERTIES if p.topic is not None)


def default_of(name: str) -> Any:
    """The table's default for ``name``: what the config dataclasses declare as theirs."""
    return BY_NAME[name].default
