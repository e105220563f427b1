"""The SCRAM credentials of every user, persisted: what AlterUserScramCredentials
changes and SCRAM authentication reads.

Rules: one credential per (user, mechanism); only salt, iterations,
StoredKey and ServerKey are kept (never a password).  The store is a JSON
file (``scram-credentials.json`` in the first log directory), rewritten
atomically (temporary file, fsync, rename) on every change, so a crash
leaves the old or the new table, never a torn one.
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

from hmb.security.scram import HASHES, MAX_ITERATIONS, MIN_ITERATIONS, ScramCredential, credential_from_salted
from kproto.acl import SCRAM_MECHANISMS

FILE_NAME = "scram-credentials.json"

MECHANISM_IDS = SCRAM_MECHANISMS  # the wire numbers, kproto.acl
"""Kafka's ScramMechanism numbers, as the credential requests carry them."""
MECHANISM_NAMES = {number: name for name, number in MECHANISM_IDS.items()}


def atomic_write_json(path: Path, data: object) -> None:
    """Replace ``path`` with ``data`` as JSON: the old content or the new, never half."""
    temporary = path.with_name(path.name + ".tmp")
    with open(temporary, "w") as file:
        json.dump(data, file, indent=1, sort_keys=True)
        file.flush()
        os.fsync(file.fileno())
    os.replace(temporary, path)


class CredentialStore:
    """user -> mechanism -> :class:`ScramCredential`, backed by a file (or memory: ``path=None``)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._users: dict[str, dict[str, ScramCredential]] = {}
        if path is not None and path.exists():
            for user, mechanisms in json.loads(path.read_text()).items():
                self._users[user] = {
                    mechanism: ScramCredential(
                        base64.b64decode(c["salt"]),
                        base64.b64decode(c["stored_key"]),
                        base64.b64decode(c["server_key"]),
                        int(c["iterations"]),
                    )
                    for mechanism, c in mechanisms.items()
                }

    def get(self, user: str, mechanism: str) -> ScramCredential | None:
        return self._users.get(user, {}).get(mechanism)

    def users(self) -> dict[str, dict[str, ScramCredential]]:
        return {user: dict(m) for user, m in sorted(self._users.items())}

    @staticmethod
    def check_iterations(mechanism: str, iterations: int) -> str | None:
        """Why ``iterations`` is refused for ``mechanism``, or None."""
        if mechanism not in HASHES:
            return f"unknown SCRAM mechanism {mechanism}"
        if not MIN_ITERATIONS <= iterations <= MAX_ITERATIONS:
            return f"iterations must be {MIN_ITERATIONS} to {MAX_ITERATIONS}, got {iterations}"
        return None

    def upsert(self, user: str, mechanism: str, salted: bytes, salt: bytes, iterations: int) -> None:
        credential = credential_from_salted(HASHES[mechanism], salted, salt, iterations)
        self._users.setdefault(user, {})[mechanism] = credential
        self._save()

    def delete(self, user: str, mechanism: str) -> bool:
        """Remove one credential; False when there was none."""
        removed = self._users.get(user, {}).pop(mechanism, None)
        if user in self._users and not self._users[user]:
            del self._users[user]
        if removed is not None:
            self._save()
        return removed is not None

    def _save(self) -> None:
        if self.path is None:
            return
        b64 = lambda b: base64.b64encode(b).decode()  # noqa: E731
        atomic_write_json(
            self.path,
            {
                user: {
                    m: {
                        "salt": b64(c.salt),
                        "stored_key": b64(c.stored_key),
                        "server_key": b64(c.server_key),
                        "iterations": c.iterations,
                    }
                    for m, c in mechanisms.items()
                }
                for user, mechanisms in self._users.items()
            },
        )
