"""``hmb users`` and ``hmb acls`` with ``--command-config``, against a SASL broker with ACLs.

The broker runs in a thread of this process (its SASL and ACL grammars are
still temporary test modules); the tools run as ``hmb`` would run them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from threaded_broker import ThreadedBroker

from hmb_client.cli import main

JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-pw";'


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[ThreadedBroker]:
    lines = (
        "listeners=PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
        f"listener.name.sasl_plaintext.plain.sasl.jaas.config={JAAS}",
        "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users=User:admin",
    )
    with ThreadedBroker(tmp_path / "data", *lines) as b:
        yield b


@pytest.fixture
def admin_config(tmp_path: Path) -> Path:
    path = tmp_path / "admin.properties"
    path.write_text(
        "security.protocol=SASL_PLAINTEXT\n"
        "sasl.mechanism=PLAIN\n"
        "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
        'username="admin" password="admin-pw";\n'
    )
    return path


def hmb(broker: ThreadedBroker, config: Path, *args: str) -> int:
    return main(
        [*args, "--bootstrap-server", broker.address("SASL_PLAINTEXT"), "--command-config", str(config)]
    )


def test_users_add_list_delete(
    broker: ThreadedBroker, admin_config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert hmb(broker, admin_config, "users", "add", "alice", "--password", "pw", "--iterations", "8192") == 0
    assert hmb(broker, admin_config, "users", "list") == 0
    out = capsys.readouterr().out
    assert "alice\tSCRAM-SHA-256 (iterations=8192), SCRAM-SHA-512 (iterations=8192)" in out
    store = (broker.config.log_dirs[0] / "scram-credentials.json").read_text()
    assert "alice" in store and '"pw"' not in store
    assert hmb(broker, admin_config, "users", "delete", "alice", "--mechanism", "SCRAM-SHA-256") == 0
    assert hmb(broker, admin_config, "users", "list") == 0
    assert "alice\tSCRAM-SHA-512 (iterations=8192)\n" in capsys.readouterr().out


def test_acls_add_list_remove(
    broker: ThreadedBroker, admin_config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--allow-principal", "User:alice", "--consumer", "--topic", "orders", "--group", "g1"]
    assert hmb(broker, admin_config, "acls", "add", *args) == 0
    capsys.readouterr()
    assert hmb(broker, admin_config, "acls", "list", "--topic", "orders") == 0
    listed = capsys.readouterr().out
    assert "Topic:LITERAL:orders\tprincipal=User:alice host=* operation=Read permission=Allow" in listed
    assert "operation=Describe" in listed and "Group" not in listed
    assert hmb(broker, admin_config, "acls", "remove", "--topic", "orders") == 0
    capsys.readouterr()
    assert hmb(broker, admin_config, "acls", "list") == 0
    assert (
        capsys.readouterr().out
        == "Group:LITERAL:g1\tprincipal=User:alice host=* operation=Read permission=Allow\n"
    )


def test_a_non_admin_is_refused(
    broker: ThreadedBroker, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "anon.properties"
    config.write_text("security.protocol=PLAINTEXT\n")
    code = main(
        ["acls", "list", "--bootstrap-server", broker.address("PLAINTEXT"), "--command-config", str(config)]
    )
    assert code == 1 and "CLUSTER_AUTHORIZATION_FAILED" in capsys.readouterr().err


def test_command_config_refuses_unknown_keys(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "typo.properties"
    config.write_text("security.protocoll=SSL\n")
    assert main(["users", "list", "--command-config", str(config)]) == 2
    assert "security.protocoll" in capsys.readouterr().err
