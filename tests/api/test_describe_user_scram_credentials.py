"""DescribeUserScramCredentials v0 in process: which users have which SCRAM mechanisms.

A null list describes every user; a named user without credentials is
RESOURCE_NOT_FOUND for that user alone; a name given twice is
DUPLICATE_RESOURCE; salts and salted passwords are never returned.
"""

from __future__ import annotations

from pathlib import Path

from hmb.api.context import Session
from kproto import ApiKey, ErrorCode
from tests.security.sasl_support import PEER, add_scram_user

from .harness import InProcessBroker


async def test_describe(tmp_path: Path) -> None:
    b = InProcessBroker(tmp_path / "data")
    await add_scram_user(b, "alice", "pw", "SCRAM-SHA-512", 8192)

    async def describe(users: list[str] | None) -> dict[str, tuple[int, list[tuple[int, int]]]]:
        body = {"users": None if users is None else [{"name": u} for u in users]}
        resp = await b.request(ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, 0, body, session=Session(PEER))
        assert resp.error_code == ErrorCode.NONE
        return {
            r.user: (r.error_code, [(c.mechanism, c.iterations) for c in r.credential_infos])
            for r in resp.results
        }

    assert await describe(None) == {"alice": (0, [(2, 8192)])}
    assert await describe(["carol"]) == {"carol": (ErrorCode.RESOURCE_NOT_FOUND, [])}
    assert (await describe(["alice", "alice"]))["alice"][0] == ErrorCode.DUPLICATE_RESOURCE
