"""Test certificates, made fresh by the tests (never committed): a CA, a server
certificate for 127.0.0.1/localhost and client certificates, as PEM files.

``make_pki(dir)`` writes ``ca.pem``, ``server.pem`` (chain and key, as an
``ssl.keystore.location`` with ``ssl.keystore.type=PEM``), ``client.pem`` +
``client.key`` (subject ``CN=alice,OU=eng,O=hmb``), and a second CA with a
client certificate of its own (``rogue.pem`` + ``rogue.key``) that the
broker must refuse.  Skips the test when ``cryptography`` is missing.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

x509: Any = pytest.importorskip(
    "cryptography.x509", reason="the TLS tests make certificates with cryptography"
)
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402
from cryptography.x509.oid import NameOID  # noqa: E402


@dataclass(frozen=True)
class Pki:
    ca: Path
    server: Path  # certificate chain + key
    client_cert: Path
    client_key: Path
    rogue_cert: Path
    rogue_key: Path


def _name(cn: str, ou: str | None = None) -> Any:
    parts = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, "hmb")]
    if ou:
        parts.append(x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, ou))
    parts.append(x509.NameAttribute(NameOID.COMMON_NAME, cn))
    return x509.Name(parts)


def _cert(
    subject: Any, key: Any, issuer: Any, issuer_key: Any, *, ca: bool, sans: list[Any] | None = None
) -> Any:
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def _key() -> Any:
    return ec.generate_private_key(ec.SECP256R1())


def _pem_key(key: Any) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _pem(cert: Any) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def make_pki(directory: Path) -> Pki:
    directory.mkdir(parents=True, exist_ok=True)
    ca_key, rogue_ca_key = _key(), _key()
    ca_name, rogue_name = _name("hmb test CA"), _name("rogue CA")
    ca = _cert(ca_name, ca_key, ca_name, ca_key, ca=True)
    server_key, client_key, rogue_key = _key(), _key(), _key()
    sans = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    server = _cert(_name("localhost"), server_key, ca_name, ca_key, ca=False, sans=sans)
    client = _cert(_name("alice", "eng"), client_key, ca_name, ca_key, ca=False)
    rogue = _cert(_name("alice", "eng"), rogue_key, rogue_name, rogue_ca_key, ca=False)
    files = {
        "ca.pem": _pem(ca),
        "server.pem": _pem(server) + _pem(ca) + _pem_key(server_key),
        "client.pem": _pem(client),
        "client.key": _pem_key(client_key),
        "rogue.pem": _pem(rogue),
        "rogue.key": _pem_key(rogue_key),
    }
    for name, data in files.items():
        (directory / name).write_bytes(data)
    return Pki(
        *(
            directory / n
            for n in ("ca.pem", "server.pem", "client.pem", "client.key", "rogue.pem", "rogue.key")
        )
    )
