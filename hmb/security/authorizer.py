"""The authoriser: Kafka's StandardAuthorizer decisions over a persisted set of ACL bindings.

Rules of a decision (principal, host, operation, resource), in order:

1. A super user (``super.users``, ``;``-separated principals) may do anything.
2. The bindings that apply to the resource (:mod:`hmb.security.acl` says
   which) are looked at: one applying DENY denies, whatever else allows.
3. Else one applying ALLOW allows.
4. Else, when no binding at all names the resource (for any principal),
   ``allow.everyone.if.no.acl.found`` decides; when some binding names it
   but none applies, it is denied.

The bindings live in ``acls.json`` in the first log directory, rewritten
atomically on every change, and are read back at start.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from hmb.security.acl import (
    IMPLIED_BY_ALLOW,
    WILDCARD,
    WILDCARD_PRINCIPAL,
    AclBinding,
    AclFilter,
    Operation,
    Permission,
    ResourceType,
)
from hmb.security.credentials import atomic_write_json

FILE_NAME = "acls.json"


class Authorizer:
    def __init__(
        self,
        path: Path | None = None,
        *,
        super_users: Iterable[str] = (),
        allow_everyone_if_no_acl_found: bool = False,
    ) -> None:
        self.path = path
        self.super_users = frozenset(super_users)
        self.allow_if_no_acl = allow_everyone_if_no_acl_found
        self._acls: list[AclBinding] = []
        if path is not None and path.exists():
            self._acls = [AclBinding.from_json(item) for item in json.loads(path.read_text())]

    @staticmethod
    def parse_super_users(text: str) -> list[str]:
        return [item.strip() for item in text.split(";") if item.strip()]

    # ------------------------------------------------------------------ decisions

    def authorize(
        self, principal: str, host: str, operation: Operation, resource_type: ResourceType, name: str
    ) -> bool:
        if principal in self.super_users:
            return True
        on_resource = [acl for acl in self._acls if acl.applies_to_resource(resource_type, name)]
        if not on_resource:
            return self.allow_if_no_acl
        allowed = False
        for acl in on_resource:
            if acl.principal not in (principal, WILDCARD_PRINCIPAL) or acl.host not in (host, WILDCARD):
                continue
            if acl.permission == Permission.DENY:
                if acl.operation in (operation, Operation.ALL):
                    return False
            elif acl.operation in (operation, Operation.ALL) or acl.operation in IMPLIED_BY_ALLOW.get(
                operation, ()
            ):
                allowed = True
        return allowed

    def authorize_any(
        self, principal: str, host: str, operation: Operation, resource_type: ResourceType
    ) -> bool:
        """Whether ``operation`` is allowed on some resource of ``resource_type`` (Kafka's
        authorizeByResourceType: an idempotent producer needs Write on any topic).

        Some ALLOW binding must apply to the principal, and no DENY for it may cover
        the same resources (the same pattern, or the type's wildcard)."""
        if principal in self.super_users:
            return True

        def applies(acl: AclBinding) -> bool:
            return (
                acl.resource_type == resource_type
                and acl.principal in (principal, WILDCARD_PRINCIPAL)
                and acl.host in (host, WILDCARD)
                and acl.operation in (operation, Operation.ALL)
            )

        denies = [acl for acl in self._acls if applies(acl) and acl.permission == Permission.DENY]
        if any(d.resource_name == WILDCARD and d.pattern_type.name == "LITERAL" for d in denies):
            return False
        for acl in self._acls:
            if applies(acl) and acl.permission == Permission.ALLOW:
                covered = any(
                    d.pattern_type == acl.pattern_type and acl.resource_name.startswith(d.resource_name)
                    if d.pattern_type.name == "PREFIXED"
                    else d.resource_name == acl.resource_name and d.pattern_type == acl.pattern_type
                    for d in denies
                )
                if not covered:
                    return True
        return self.allow_if_no_acl and not any(a.resource_type == resource_type for a in self._acls)

    # ------------------------------------------------------------------ management

    def acls(self, selection: AclFilter | None = None) -> list[AclBinding]:
        return [acl for acl in self._acls if selection is None or selection.matches(acl)]

    def create(self, bindings: Iterable[AclBinding]) -> None:
        """Add bindings (one already present is kept once)."""
        for binding in bindings:
            if binding not in self._acls:
                self._acls.append(binding)
        self._save()

    def delete(self, selection: AclFilter) -> list[AclBinding]:
        """Remove and return the bindings ``selection`` matches."""
        removed = [acl for acl in self._acls if selection.matches(acl)]
        if removed:
            self._acls = [acl for acl in self._acls if not selection.matches(acl)]
            self._save()
        return removed

    def _save(self) -> None:
        if self.path is not None:
            atomic_write_json(self.path, [acl.to_json() for acl in self._acls])
