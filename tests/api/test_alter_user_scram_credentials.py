"""DescribeUserScramCredentials and AlterUserScramCredentials in process: Kafka's per-user errors."""

from __future__ import annotations

from pathlib import Path

from hmb.api.context import Session
from hmb.security.principal import user
from kproto import ApiKey, ErrorCode
from tests.api.harness import InProcessBroker
from tests.security.sasl_support import PEER, add_scram_user

SHA256, SHA512 = 1, 2


async def _describe(
    b: InProcessBroker, *names: str, session: Session | None = None
) -> dict[str, tuple[int, list[tuple[int, int]]]]:
    body = {"users": [{"name": n} for n in names] if names else None}
    resp = await b.request(ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, 0, body, session=session or Session(PEER))
    assert resp.error_code == ErrorCode.NONE, resp
    return {
        r.user: (r.error_code, [(c.mechanism, c.iterations) for c in r.credential_infos])
        for r in resp.results
    }


async def test_add_describe_delete(tmp_path: Path) -> None:
    b = InProcessBroker(tmp_path / "data")
    await add_scram_user(b, "alice", "pw", "SCRAM-SHA-256", 4096)
    await add_scram_user(b, "alice", "pw", "SCRAM-SHA-512", 8192)
    await add_scram_user(b, "bob", "pw", "SCRAM-SHA-512")
    assert await _describe(b) == {
        "alice": (0, [(SHA256, 4096), (SHA512, 8192)]),
        "bob": (0, [(SHA512, 4096)]),
    }
    assert await _describe(b, "carol", "bob") == {
        "carol": (ErrorCode.RESOURCE_NOT_FOUND, []),
        "bob": (0, [(SHA512, 4096)]),
    }
    assert (await _describe(b, "bob", "bob"))["bob"][0] == ErrorCode.DUPLICATE_RESOURCE
    body = {"deletions": [{"name": "alice", "mechanism": SHA256}], "upsertions": []}
    resp = await b.request(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, 0, body)
    assert resp.results[0].error_code == ErrorCode.NONE
    b.restart()  # persisted
    assert await _describe(b, "alice") == {"alice": (0, [(SHA512, 8192)])}


async def test_refused_changes(tmp_path: Path) -> None:
    b = InProcessBroker(tmp_path / "data")
    assert (await add_scram_user(b, "x", "pw", "SCRAM-SHA-256", 100)).results[0].error_code == (
        ErrorCode.UNACCEPTABLE_CREDENTIAL
    )
    assert (await add_scram_user(b, "", "pw", "SCRAM-SHA-256")).results[
        0
    ].error_code == ErrorCode.UNACCEPTABLE_CREDENTIAL
    missing = {"deletions": [{"name": "ghost", "mechanism": SHA256}], "upsertions": []}
    resp = await b.request(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, 0, missing)
    assert resp.results[0].error_code == ErrorCode.RESOURCE_NOT_FOUND
    unknown = {"deletions": [{"name": "x", "mechanism": 9}], "upsertions": []}
    resp = await b.request(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, 0, unknown)
    assert resp.results[0].error_code == ErrorCode.UNSUPPORTED_SASL_MECHANISM
    assert await _describe(b) == {}  # nothing was stored


async def test_credentials_need_cluster_rights(tmp_path: Path) -> None:
    b = InProcessBroker(
        tmp_path / "data",
        "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users=User:ANONYMOUS",  # the harness's default session sets things up
    )
    await add_scram_user(b, "alice", "pw", "SCRAM-SHA-256")
    mallory = Session(peer=PEER, principal=user("mallory"))
    resp = await b.request(ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, 0, {"users": None}, session=mallory)
    assert resp.error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED and resp.results == []
    body = {"deletions": [{"name": "alice", "mechanism": SHA256}], "upsertions": []}
    resp = await b.request(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, 0, body, session=mallory)
    assert resp.results[0].error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    assert await _describe(b) == {"alice": (0, [(SHA256, 4096)])}
