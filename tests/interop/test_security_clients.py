"""Real clients over TLS and SASL: confluent-kafka, kafka-python, aiokafka and kcat.

SSL (with and without a client certificate) runs against ``hmb serve`` as a
process.  SASL_PLAINTEXT and SASL_SSL with PLAIN, SCRAM-SHA-256 and
SCRAM-SHA-512 run against a broker in a thread of this process
(tests/support/threaded_broker.py) while the SASL grammars are temporary
test modules.  Each client produces, then consumes what it produced (in a
group where the client has groups); the admin clients create a topic.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import ssl
import subprocess
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from broker_process import BrokerProcess
from certs import Pki, make_pki
from threaded_broker import ThreadedBroker

from hmb.security.credentials import CredentialStore
from hmb.security.scram import salted_password

pytestmark = pytest.mark.interop

USERS = {"alice": "alice-secret", "bob": "bob-secret"}
JAAS = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    + " ".join(f'user_{u}="{p}"' for u, p in USERS.items())
    + ";"
)
N = 20


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


def _tls_settings(pki: Pki, client_auth: str) -> list[str]:
    return [
        f"ssl.keystore.location={pki.server}",
        f"ssl.truststore.location={pki.ca}",
        f"ssl.client.auth={client_auth}",
    ]


@pytest.fixture(scope="module")
def ssl_broker(tmp_path_factory: pytest.TempPathFactory, pki: Pki) -> Iterator[tuple[BrokerProcess, int]]:
    """``hmb serve`` with a PLAINTEXT and an SSL listener; client certificates requested."""
    data = tmp_path_factory.mktemp("ssl") / "data"
    lines = ["listeners=PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0", *_tls_settings(pki, "requested")]
    with BrokerProcess(data, *lines) as b:
        port = int(b.wait_for_log(r"listening on [\d.]+:(\d+) \(listener SSL").group(1))
        yield b, port


@pytest.fixture(scope="module")
def sasl_broker(tmp_path_factory: pytest.TempPathFactory, pki: Pki) -> Iterator[ThreadedBroker]:
    data = tmp_path_factory.mktemp("sasl") / "data"
    data.mkdir(parents=True)
    store = CredentialStore(data / "scram-credentials.json")
    for name, password in USERS.items():
        for mechanism, hash_name in (("SCRAM-SHA-256", "sha256"), ("SCRAM-SHA-512", "sha512")):
            salt = os.urandom(16)
            store.upsert(name, mechanism, salted_password(hash_name, password, salt, 4096), salt, 4096)
    lines = [
        "listeners=PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0",
        *_tls_settings(pki, "none"),
        f"listener.name.sasl_plaintext.plain.sasl.jaas.config={JAAS}",
        f"listener.name.sasl_ssl.plain.sasl.jaas.config={JAAS}",
        "group.initial.rebalance.delay.ms=0",
    ]
    with ThreadedBroker(data, *lines) as b:
        yield b


# ------------------------------------------------------------------ the clients, one function each


def confluent_roundtrip(bootstrap: str, settings: dict[str, Any]) -> list[bytes]:
    from confluent_kafka import Consumer, Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    topic = f"sec-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap, **settings})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(timeout=30)
    producer = Producer({"bootstrap.servers": bootstrap, **settings})
    for i in range(N):
        producer.produce(topic, b"m%d" % i)
    assert producer.flush(30) == 0
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": topic, "auto.offset.reset": "earliest", **settings}
    )
    consumer.subscribe([topic])
    got: list[bytes] = []
    for _ in range(200):
        if len(got) >= N:
            break
        msg = consumer.poll(0.5)
        if msg is not None and msg.error() is None:
            got.append(msg.value())
    consumer.commit(asynchronous=False)
    consumer.close()
    return got


def kafka_python_roundtrip(bootstrap: str, settings: dict[str, Any]) -> list[bytes]:
    from kafka import KafkaConsumer, KafkaProducer
    from kafka.admin import KafkaAdminClient, NewTopic

    topic = f"sec-{uuid.uuid4().hex[:8]}"
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, **settings)
    admin.create_topics([NewTopic(topic, 1, 1)])
    admin.close()
    producer = KafkaProducer(bootstrap_servers=bootstrap, **settings)
    for i in range(N):
        producer.send(topic, b"m%d" % i)
    producer.flush(30)
    producer.close()
    consumer = KafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id=topic,
        auto_offset_reset="earliest",
        consumer_timeout_ms=15000,
        **settings,
    )
    got = []
    for msg in consumer:
        got.append(msg.value)
        if len(got) >= N:
            break
    consumer.commit()
    consumer.close()
    return got


def aiokafka_roundtrip(bootstrap: str, settings: dict[str, Any]) -> list[bytes]:
    aiokafka = pytest.importorskip("aiokafka")

    async def main() -> list[bytes]:
        topic = f"sec-{uuid.uuid4().hex[:8]}"
        producer = aiokafka.AIOKafkaProducer(bootstrap_servers=bootstrap, **settings)
        await producer.start()
        try:
            for i in range(N):
                await producer.send_and_wait(topic, b"m%d" % i)
        finally:
            await producer.stop()
        consumer = aiokafka.AIOKafkaConsumer(
            topic, bootstrap_servers=bootstrap, group_id=topic, auto_offset_reset="earliest", **settings
        )
        await consumer.start()
        got: list[bytes] = []
        try:
            async with asyncio.timeout(30):
                async for msg in consumer:
                    got.append(msg.value)
                    if len(got) >= N:
                        break
        finally:
            await consumer.stop()
        return got

    return asyncio.run(main())


def hmb_client_roundtrip(bootstrap: str, settings: dict[str, Any]) -> list[bytes]:
    from hmb_client import Admin, Consumer, Producer

    topic = f"sec-{uuid.uuid4().hex[:8]}"
    with Admin(bootstrap, **settings) as admin:
        admin.create_topic(topic, 1)
    producer = Producer(bootstrap, **settings)
    for i in range(N):
        producer.send(topic, b"m%d" % i)
    producer.flush(30)
    producer.close()
    consumer = Consumer(
        bootstrap, group_id=topic, auto_offset_reset="earliest", consumer_timeout_ms=15000, **settings
    )
    consumer.subscribe([topic])
    got = []
    for record in consumer:
        got.append(record.value)
        if len(got) >= N:
            break
    consumer.commit()
    consumer.close()
    return got


def kcat_roundtrip(bootstrap: str, settings: dict[str, Any]) -> list[bytes]:
    kcat = shutil.which("kcat") or shutil.which("kafkacat")
    if kcat is None:
        pytest.skip("kcat is not installed")
    topic = f"sec-{uuid.uuid4().hex[:8]}"
    options = [arg for key, value in settings.items() for arg in ("-X", f"{key}={value}")]
    lines = "\n".join(f"m{i}" for i in range(N)) + "\n"
    subprocess.run(
        [kcat, "-b", bootstrap, "-P", "-t", topic, *options], input=lines.encode(), check=True, timeout=60
    )
    out = subprocess.run(
        [kcat, "-b", bootstrap, "-C", "-t", topic, "-o", "beginning", "-c", str(N), "-e", *options],
        capture_output=True,
        check=True,
        timeout=60,
    )
    return out.stdout.split()


# ------------------------------------------------------------------ settings per client

LIBRDKAFKA = {"confluent": confluent_roundtrip, "kcat": kcat_roundtrip}
PYTHONIC = {
    "kafka-python": kafka_python_roundtrip,
    "aiokafka": aiokafka_roundtrip,
    "hmb_client": hmb_client_roundtrip,
}
EXPECTED = sorted(b"m%d" % i for i in range(N))


def _settings(
    client: str, protocol: str, pki: Pki, mechanism: str | None = None, cert: bool = False
) -> dict[str, Any]:
    user = "alice"
    if client in LIBRDKAFKA:
        out: dict[str, Any] = {"security.protocol": protocol}
        if "SSL" in protocol:
            out["ssl.ca.location"] = str(pki.ca)
            if cert:
                out |= {
                    "ssl.certificate.location": str(pki.client_cert),
                    "ssl.key.location": str(pki.client_key),
                }
        if mechanism:
            out |= {"sasl.mechanisms": mechanism, "sasl.username": user, "sasl.password": USERS[user]}
        return out
    out = {"security_protocol": protocol}
    if "SSL" in protocol:
        if client == "aiokafka":
            context = ssl.create_default_context(cafile=str(pki.ca))
            if cert:
                context.load_cert_chain(str(pki.client_cert), str(pki.client_key))
            out["ssl_context"] = context
        else:
            out["ssl_cafile"] = str(pki.ca)
            if cert:
                out |= {"ssl_certfile": str(pki.client_cert), "ssl_keyfile": str(pki.client_key)}
    if mechanism:
        out |= {"sasl_mechanism": mechanism, "sasl_plain_username": user, "sasl_plain_password": USERS[user]}
    return out


CLIENTS = {**LIBRDKAFKA, **PYTHONIC}


@pytest.mark.parametrize("cert", [False, True], ids=["server-auth", "client-cert"])
@pytest.mark.parametrize("client", list(CLIENTS))
def test_ssl(ssl_broker: tuple[BrokerProcess, int], pki: Pki, client: str, cert: bool) -> None:
    broker, port = ssl_broker
    got = CLIENTS[client](f"127.0.0.1:{port}", _settings(client, "SSL", pki, cert=cert))
    assert sorted(got) == EXPECTED
    assert broker.alive()


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
@pytest.mark.parametrize("protocol", ["SASL_PLAINTEXT", "SASL_SSL"])
@pytest.mark.parametrize("client", list(CLIENTS))
def test_sasl(sasl_broker: ThreadedBroker, pki: Pki, client: str, protocol: str, mechanism: str) -> None:
    got = CLIENTS[client](sasl_broker.address(protocol), _settings(client, protocol, pki, mechanism))
    assert sorted(got) == EXPECTED


@pytest.mark.parametrize("client", ["confluent", "aiokafka", "hmb_client"])
def test_wrong_password_is_refused(
    sasl_broker: ThreadedBroker, pki: Pki, client: str, caplog: pytest.LogCaptureFixture
) -> None:
    settings = _settings(client, "SASL_PLAINTEXT", pki, "SCRAM-SHA-256")
    if client == "confluent":
        from confluent_kafka import KafkaError, Producer

        errors: list[Any] = []
        settings["sasl.password"] = "wrong"
        producer = Producer(
            {
                "bootstrap.servers": sasl_broker.address("SASL_PLAINTEXT"),
                "error_cb": errors.append,
                **settings,
            }
        )
        for _ in range(40):
            if any(e.code() == KafkaError._AUTHENTICATION for e in errors):
                break
            producer.poll(0.25)
        assert any(e.code() == KafkaError._AUTHENTICATION for e in errors), errors
    elif client == "hmb_client":
        from hmb_client import Admin
        from hmb_client.errors import SaslAuthenticationFailedError

        settings["sasl_plain_password"] = "wrong"
        with Admin(sasl_broker.address("SASL_PLAINTEXT"), request_timeout_ms=10_000, **settings) as admin:
            with pytest.raises(SaslAuthenticationFailedError, match="invalid credentials"):
                admin.list_topics()
    else:
        aiokafka = pytest.importorskip("aiokafka")
        from aiokafka.errors import KafkaError as AioKafkaError

        settings["sasl_plain_password"] = "wrong"

        async def start() -> None:
            producer = aiokafka.AIOKafkaProducer(
                bootstrap_servers=sasl_broker.address("SASL_PLAINTEXT"), **settings
            )
            try:
                await producer.start()
            finally:
                await producer.stop()

        with pytest.raises(AioKafkaError):
            asyncio.run(start())
        assert (
            "[Error 58] SaslAuthenticationFailed" in caplog.text
        )  # the broker's answer, as the client logs it


# ------------------------------------------------------------------ ACLs seen by a real client


@pytest.fixture(scope="module")
def acl_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ThreadedBroker]:
    """SASL_PLAINTEXT with PLAIN users, the authoriser on; admin is a super user."""
    jaas = (
        "org.apache.kafka.common.security.plain.PlainLoginModule required "
        'user_admin="admin-pw" user_alice="alice-pw";'
    )
    lines = [
        "listeners=SASL_PLAINTEXT://127.0.0.1:0",
        f"listener.name.sasl_plaintext.plain.sasl.jaas.config={jaas}",
        "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users=User:admin",
    ]
    with ThreadedBroker(tmp_path_factory.mktemp("acl") / "data", *lines) as b:
        yield b


def _rdkafka(user: str, password: str) -> dict[str, Any]:
    return {
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanisms": "PLAIN",
        "sasl.username": user,
        "sasl.password": password,
    }


def test_confluent_sees_the_acls(acl_broker: ThreadedBroker) -> None:
    from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
    from confluent_kafka.admin import (
        AclBinding,
        AclOperation,
        AclPermissionType,
        AdminClient,
        NewTopic,
        ResourcePatternType,
        ResourceType,
    )

    bootstrap = acl_broker.address("SASL_PLAINTEXT")
    admin = AdminClient({"bootstrap.servers": bootstrap, **_rdkafka("admin", "admin-pw")})
    admin.create_topics([NewTopic("guarded", 1, 1)])["guarded"].result(timeout=30)
    write = AclBinding(
        ResourceType.TOPIC,
        "guarded",
        ResourcePatternType.LITERAL,
        "User:alice",
        "*",
        AclOperation.WRITE,
        AclPermissionType.ALLOW,
    )
    group = AclBinding(
        ResourceType.GROUP,
        "alice-g",
        ResourcePatternType.LITERAL,
        "User:alice",
        "*",
        AclOperation.READ,
        AclPermissionType.ALLOW,
    )
    for future in admin.create_acls([write, group]).values():
        future.result(timeout=30)
    listed = admin.describe_acls(
        __import__("confluent_kafka.admin", fromlist=["AclBindingFilter"]).AclBindingFilter(
            ResourceType.ANY,
            None,
            ResourcePatternType.ANY,
            None,
            None,
            AclOperation.ANY,
            AclPermissionType.ANY,
        )
    ).result(timeout=30)
    assert sorted((b.name, b.principal, b.operation.name) for b in listed) == [
        ("alice-g", "User:alice", "READ"),
        ("guarded", "User:alice", "WRITE"),
    ]

    failures: list[Any] = []
    producer = Producer({"bootstrap.servers": bootstrap, **_rdkafka("alice", "alice-pw")})
    producer.produce("guarded", b"allowed", on_delivery=lambda err, msg: err and failures.append(err))
    assert producer.flush(30) == 0 and failures == []  # alice may write

    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "alice-g", **_rdkafka("alice", "alice-pw")}
    )
    consumer.assign([TopicPartition("guarded", 0, 0)])
    seen = None
    for _ in range(40):
        msg = consumer.poll(0.5)
        if msg is not None and msg.error() is not None:
            seen = msg.error().code()
            break
        assert msg is None or msg.error() is not None, "alice read a topic she may only write"
    consumer.close()
    assert seen == KafkaError.TOPIC_AUTHORIZATION_FAILED

    denied = AdminClient({"bootstrap.servers": bootstrap, **_rdkafka("alice", "alice-pw")})
    with pytest.raises(KafkaException, match=r"(?i)authoriz"):
        denied.create_acls([write])[write].result(timeout=30)  # alice may not manage ACLs
