"""The "Cluster (ZooKeeper)" settings: a cluster of brokers on ZooKeeper; without
``zookeeper.connect`` a broker runs alone.

How to add one: see :mod:`hmb.properties.table`.
"""

from __future__ import annotations

from hmb.properties.model import (
    BOOLEAN,
    INT,
    STRING,
    Property,
)

CLUSTER = "Cluster (ZooKeeper)"

PROPERTIES: tuple[Property, ...] = (
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
        "The replication factor of a topic created without one (auto-created, or CreateTopics with -1) "
        "in a cluster; a broker alone keeps one replica.",
        CLUSTER,
        attr="default_replication_factor",
        at_least=1,
    ),
    Property(
        "offsets.topic.replication.factor",
        INT,
        3,
        "The replication factor of __consumer_offsets in a cluster. As in Kafka, the topic is not "
        "created (groups get COORDINATOR_NOT_AVAILABLE) until this many brokers are alive.",
        CLUSTER,
        attr="offsets_topic_replication_factor",
        at_least=1,
    ),
    Property(
        "offsets.topic.num.partitions",
        INT,
        50,
        "The partition count of __consumer_offsets in a cluster; a group's coordinator is the "
        "leader of the partition its id hashes to, and its committed offsets move with that "
        "leadership. Alone, the broker keeps them in one partition (the spread buys nothing on "
        "one broker, and a fresh start stays quick).",
        CLUSTER,
        attr="offsets_topic_num_partitions",
        at_least=1,
    ),
    Property(
        "transaction.state.log.num.partitions",
        INT,
        50,
        "The partition count of __transaction_state in a cluster; a transactional id's "
        "coordinator is the leader of the partition its id hashes to, and its transactions move "
        "with that leadership. Alone, the broker keeps them in one partition.",
        CLUSTER,
        attr="transaction_state_log_num_partitions",
        at_least=1,
    ),
    Property(
        "transaction.state.log.replication.factor",
        INT,
        3,
        "The replication factor of __transaction_state in a cluster. As in Kafka, the topic is not "
        "created (transactional producers get COORDINATOR_NOT_AVAILABLE) until this many brokers "
        "are alive.",
        CLUSTER,
        attr="transaction_state_log_replication_factor",
        at_least=1,
    ),
    Property(
        "transaction.state.log.min.isr",
        INT,
        2,
        "The min.insync.replicas __transaction_state is created with: a coordinator's state "
        "write (acks=all) is refused when fewer replicas are in sync.",
        CLUSTER,
        attr="transaction_state_log_min_isr",
        at_least=1,
    ),
    Property(
        "replica.lag.time.max.ms",
        INT,
        30000,
        "How long a follower may go without catching up before the leader drops it from the "
        "in-sync replicas (written to the partition's state znode).",
        CLUSTER,
        attr="replica_lag_time_max_ms",
        at_least=1,
        unit="ms",
    ),
    Property(
        "replica.high.watermark.checkpoint.interval.ms",
        INT,
        5000,
        "How often each log dir's replication-offset-checkpoint is rewritten with the high "
        "watermarks of this broker's replicas (also at a clean shutdown): a restarted replica "
        "starts from it instead of its log start.",
        CLUSTER,
        attr="replica_high_watermark_checkpoint_interval_ms",
        at_least=1,
        unit="ms",
    ),
    Property(
        "replica.fetch.wait.max.ms",
        INT,
        500,
        "How long a follower's fetch waits at the leader for new records; keep it below "
        "replica.lag.time.max.ms.",
        CLUSTER,
        attr="replica_fetch_wait_max_ms",
        at_least=0,
        unit="ms",
    ),
    Property(
        "replica.fetch.min.bytes",
        INT,
        1,
        "How many bytes a follower's fetch waits for at the leader (up to replica.fetch.wait.max.ms).",
        CLUSTER,
        attr="replica_fetch_min_bytes",
        at_least=1,
    ),
    Property(
        "replica.fetch.max.bytes",
        INT,
        1048576,
        "How many bytes a follower's fetch asks for per partition (at least one whole batch is sent).",
        CLUSTER,
        attr="replica_fetch_max_bytes",
        at_least=0,
    ),
    Property(
        "unclean.leader.election.enable",
        BOOLEAN,
        False,
        "Whether the controller may make a replica outside the in-sync set leader (losing "
        "records) when no in-sync one is alive. With one replica a dead leader's partition "
        "waits for it.",
        CLUSTER,
        attr="unclean_leader_election_enable",
    ),
    Property(
        "controlled.shutdown.enable",
        BOOLEAN,
        True,
        "Whether a broker stopping cleanly first asks the controller to move the leadership of "
        "its partitions to other in-sync replicas, so clients never meet a leaderless partition.",
        CLUSTER,
        attr="controlled_shutdown_enable",
    ),
    Property(
        "controlled.shutdown.max.retries",
        INT,
        3,
        "How many times a stopping broker asks the controller again while it still leads "
        "partitions that could move (or the controller cannot be reached) before it stops anyway.",
        CLUSTER,
        attr="controlled_shutdown_max_retries",
        at_least=0,
    ),
    Property(
        "controlled.shutdown.retry.backoff.ms",
        INT,
        5000,
        "The pause between two controlled shutdown attempts.",
        CLUSTER,
        attr="controlled_shutdown_retry_backoff_ms",
        at_least=0,
        unit="ms",
    ),
    Property(
        "auto.leader.rebalance.enable",
        BOOLEAN,
        True,
        "Whether the controller moves leadership back to each partition's preferred replica (the "
        "first of its assignment) when that replica is alive and in sync and its broker is "
        "imbalanced.",
        CLUSTER,
        attr="auto_leader_rebalance_enable",
    ),
    Property(
        "leader.imbalance.check.interval.seconds",
        INT,
        300,
        "How often the controller checks the leaders' balance (auto.leader.rebalance.enable).",
        CLUSTER,
        attr="leader_imbalance_check_interval_seconds",
        at_least=1,
    ),
    Property(
        "leader.imbalance.per.broker.percentage",
        INT,
        10,
        "The share (in percent) of a broker's preferred partitions that others may lead before "
        "the controller gives them back.",
        CLUSTER,
        attr="leader_imbalance_per_broker_percentage",
        at_least=0,
    ),
)
