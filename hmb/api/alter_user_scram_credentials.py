"""AlterUserScramCredentials v0: add, replace or delete users' SCRAM credentials.

Kafka's rules: Alter on the cluster is needed; an unknown mechanism is
UNSUPPORTED_SASL_MECHANISM; an empty user name, or iterations outside
4096-16384, UNACCEPTABLE_CREDENTIAL; deleting a credential that does not
exist RESOURCE_NOT_FOUND; a (user, mechanism) both deleted and upserted, or
twice, DUPLICATE_RESOURCE.  One result per user: its first error, else
NONE.  The request carries the salted password, never the password.
"""

from __future__ import annotations

from typing import Any

from hmb.api.authz import cluster_allowed
from hmb.api.context import Reply, RequestContext
from hmb.api.registry import handles
from hmb.security.acl import Operation
from hmb.security.credentials import MECHANISM_NAMES, CredentialStore
from kproto import ApiKey, ErrorCode

VERSIONS = (0, 0)


def _refusal(mechanism: str | None, name: str, iterations: int | None) -> tuple[int, str] | None:
    if mechanism is None:
        return ErrorCode.UNSUPPORTED_SASL_MECHANISM, "unknown SCRAM mechanism"
    if not name:
        return ErrorCode.UNACCEPTABLE_CREDENTIAL, "the user name is empty"
    if iterations is not None:
        reason = CredentialStore.check_iterations(mechanism, iterations)
        if reason is not None:
            return ErrorCode.UNACCEPTABLE_CREDENTIAL, reason
    return None


@handles(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, versions=VERSIONS)
async def handle(ctx: RequestContext) -> Reply:
    body = ctx.request.body
    store = ctx.services.credentials
    names = list(dict.fromkeys([d.name for d in body.deletions] + [u.name for u in body.upsertions]))
    if not cluster_allowed(ctx, Operation.ALTER) or store is None:
        denied = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        return {"throttle_time_ms": 0, "results": [_result(n, (denied, None)) for n in names]}
    errors: dict[str, tuple[int, str | None]] = {}
    seen: dict[tuple[str, int], int] = {}
    for change in [*body.deletions, *body.upsertions]:
        seen[(change.name, change.mechanism)] = seen.get((change.name, change.mechanism), 0) + 1
    for deletion in body.deletions:
        mechanism = MECHANISM_NAMES.get(deletion.mechanism)
        refusal = _refusal(mechanism, deletion.name, None)
        if refusal is None and seen[(deletion.name, deletion.mechanism)] > 1:
            refusal = ErrorCode.DUPLICATE_RESOURCE, "a credential is both deleted and altered"
        if refusal is None and mechanism is not None and store.get(deletion.name, mechanism) is None:
            refusal = ErrorCode.RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not exist"
        if refusal is not None:
            errors.setdefault(deletion.name, refusal)
    for upsertion in body.upsertions:
        refusal = _refusal(MECHANISM_NAMES.get(upsertion.mechanism), upsertion.name, upsertion.iterations)
        if refusal is None and seen[(upsertion.name, upsertion.mechanism)] > 1:
            refusal = ErrorCode.DUPLICATE_RESOURCE, "a credential is altered twice"
        if refusal is not None:
            errors.setdefault(upsertion.name, refusal)
    # a user's changes apply only when none of them is refused (Kafka answers per user)
    for deletion in body.deletions:
        if deletion.name not in errors:
            store.delete(deletion.name, MECHANISM_NAMES[deletion.mechanism])
    for upsertion in body.upsertions:
        if upsertion.name not in errors:
            store.upsert(
                upsertion.name,
                MECHANISM_NAMES[upsertion.mechanism],
                bytes(upsertion.salted_password),
                bytes(upsertion.salt),
                upsertion.iterations,
            )
    return {
        "throttle_time_ms": 0,
        "results": [_result(n, errors.get(n, (ErrorCode.NONE, None))) for n in names],
    }


def _result(name: str, error: tuple[int, str | None]) -> dict[str, Any]:
    return {"user": name, "error_code": error[0], "error_message": error[1]}
