"""The "Network" settings: Listeners, request limits and the queues between a connection and its handler.

How to add one: see :mod:`hmb.properties.table`.
"""

from __future__ import annotations

from hmb.properties.model import (
    INT,
    LISTENER,
    LISTENERS,
    PROTOCOL_MAP,
    STRING,
    Listener,
    Property,
)

NETWORK = "Network"

PROPERTIES: tuple[Property, ...] = (
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
    Property(
        "max.incremental.fetch.session.cache.slots",
        INT,
        1000,
        "How many incremental fetch sessions (KIP-227) the broker keeps; when all are taken, "
        "a new one replaces an idle or a smaller one, or the client is served full fetches.",
        NETWORK,
        attr="max_incremental_fetch_session_cache_slots",
        at_least=0,
    ),
)
