"""The connection to a consumer group's coordinator, found on demand.

Committing offsets (the consumer) and group membership (:mod:`hmb_client.consumer.group`)
both talk to the group's coordinator: it is looked up with FindCoordinator
when first needed and forgotten when the connection breaks or an answer says
the coordinator moved (COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR,
COORDINATOR_LOAD_IN_PROGRESS), so the next request looks it up again — what
Kafka's clients do.
"""

from __future__ import annotations

from typing import Any

from hmb_client.cluster import Cluster
from hmb_client.connection import BrokerConnection
from hmb_client.errors import KafkaConnectionError, KafkaTimeoutError, error_for
from kproto import ErrorCode

COORDINATOR_CODES = frozenset(
    {ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS}
)


class CoordinatorLink:
    """``group_id``'s coordinator connection; lives in the client's I/O thread."""

    def __init__(self, cluster: Cluster, group_id: str) -> None:
        self.cluster = cluster
        self.group_id = group_id
        self._conn: BrokerConnection | None = None

    async def connection(self) -> BrokerConnection:
        conn = self._conn
        if conn is None or conn.closed:
            conn = self._conn = await self.cluster.coordinator(self.group_id)
        return conn

    async def version(self, api_key: int) -> int:
        """The highest version of ``api_key`` the coordinator and this client share."""
        return (await self.connection()).pick(api_key)

    async def request(
        self, api_key: int, version: int, body: dict[str, Any], timeout_s: float | None = None
    ) -> Any:
        conn = await self.connection()
        try:
            return await conn.request(api_key, version, body, timeout_s=timeout_s)
        except (KafkaConnectionError, KafkaTimeoutError):
            self._conn = None
            raise

    def check(self, code: int, what: str) -> None:
        """Raise the error of ``code`` (``what`` says what failed), forgetting the
        coordinator when the code says it moved."""
        if code in COORDINATOR_CODES:
            self._conn = None
        if code:
            raise error_for(code)(f"{what} in group {self.group_id!r}")
