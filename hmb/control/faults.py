"""Faults a test injects, and the log of requests the broker received.

The dispatcher hands every decoded request to :meth:`Interceptor.intercept`
before its handler runs (when the broker has an interceptor: embedded
brokers and brokers with a control listener).  Rules, in order:

1. Every request is logged (api key, version, client id, correlation id,
   peer), newest last, the oldest dropped beyond ``REQUEST_LOG_SIZE``.
2. While the broker is "unavailable" every request closes its connection.
3. A request above a version cap (:mod:`hmb.control.versions`) closes its
   connection; ApiVersions is answered with the capped table.
4. The first armed :class:`Fault` matching the request (its API key and, if
   the fault names them, a topic and partition the request mentions) is
   used once: it delays the request, then drops the connection, or answers
   with its error code (:mod:`hmb.control.error_replies`), or lets the
   handler answer.  A fault with a topic refuses the whole request that
   mentions it, the other partitions of that request included.
5. No fault matches: the handler answers, as without an interceptor.

Times here are real (trio's clock), not the broker's movable clock: a delay
is a delay on the wire.
"""

from __future__ import annotations

import collections
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import trio

from hmb.api.context import CloseConnection, Reply, Session
from hmb.control import versions
from hmb.control.error_replies import can_refuse, error_reply, topic_partitions
from kproto import ApiKey, ErrorCode, Request

log = logging.getLogger(__name__)

REQUEST_LOG_SIZE = 100_000


@dataclass(frozen=True)
class RequestRecord:
    """One request as the broker received it."""

    api_key: int
    api_name: str
    version: int
    client_id: str | None
    correlation_id: int
    peer: str

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class Fault:
    """What to do to the next ``count`` requests of ``api_key`` (for ``topic``/``partition``)."""

    api_key: int
    count: int = 1
    error: int | None = None  # answer with this error code
    delay_s: float = 0.0  # wait this long first
    drop: bool = False  # close the connection instead of answering
    topic: str | None = None
    partition: int | None = None

    def matches(self, request: Request, topic_names: Mapping[bytes, str] | None = None) -> bool:
        """Whether this fault applies to ``request`` (``topic_names``: topic id -> name, for the
        versions that name topics by id)."""
        if request.api_key != self.api_key or self.count <= 0:
            return False
        if self.topic is None:
            return True
        names = topic_names or {}
        return any(
            (t if isinstance(t, str) else names.get(t)) == self.topic
            and (self.partition is None or p is None or p == self.partition)
            for t, p in topic_partitions(request)
        )


def parse_api(api: int | str) -> int:
    """An API key from its number or its name (``"PRODUCE"``, ``"produce"``)."""
    if isinstance(api, int):
        return int(ApiKey(api))
    try:
        return int(ApiKey[api.upper()])
    except KeyError:
        raise ValueError(f"no API key named {api!r}") from None


def parse_error(error: int | str | None) -> int | None:
    """An error code from its number or Kafka's name (``"NOT_LEADER_OR_FOLLOWER"``)."""
    if error is None or isinstance(error, int):
        return error
    try:
        return int(ErrorCode[error.upper()])
    except KeyError:
        raise ValueError(f"no error code named {error!r}") from None


class Interceptor:
    """The armed faults and the request log of one broker."""

    def __init__(self) -> None:
        self.faults: list[Fault] = []
        self.requests: collections.deque[RequestRecord] = collections.deque(maxlen=REQUEST_LOG_SIZE)
        self.unavailable_until = float("-inf")
        #: topic id -> name (the broker's own table, set by its Control): a fault names a
        #: topic, a request of a newer version may name it by id
        self.topic_names: Mapping[bytes, str] = {}
        #: api key -> the newest version advertised and accepted (:mod:`hmb.control.versions`)
        self.version_caps: dict[int, int] = {}

    # ---------------------------------------------------------------- arming (the test's side)

    def inject(
        self,
        api: int | str,
        *,
        count: int = 1,
        error: int | str | None = None,
        delay_s: float = 0.0,
        drop: bool = False,
        topic: str | None = None,
        partition: int | None = None,
    ) -> Fault:
        """Arm a fault; checked here so a bad one changes nothing."""
        key = parse_api(api)
        code = parse_error(error)
        if count < 1:
            raise ValueError("count must be at least 1")
        if delay_s < 0:
            raise ValueError("delay must not be negative")
        if code is None and not drop and delay_s == 0:
            raise ValueError("a fault needs an error, a delay or drop=True")
        if code is not None and drop:
            raise ValueError("a fault either answers with an error or drops the connection, not both")
        if code is not None and not can_refuse(key):
            raise ValueError(f"{ApiKey.name_of(key)} has no error code to answer with")
        if partition is not None and topic is None:
            raise ValueError("a partition needs its topic")
        fault = Fault(key, count, code, delay_s, drop, topic, partition)
        self.faults.append(fault)
        return fault

    def limit_versions(self, caps: Mapping[int | str, int]) -> dict[int, int]:
        """Serve at most these versions from now (an empty mapping lifts every cap); checked
        first, so a bad cap changes nothing."""
        self.version_caps = versions.parse_caps(caps)
        return dict(self.version_caps)

    def make_unavailable(self, seconds: float) -> None:
        """Close every connection's requests for ``seconds`` (real time) from now."""
        self.unavailable_until = trio.current_time() + seconds

    def clear(self) -> None:
        """Disarm every fault and end any unavailability; the request log stays."""
        self.faults.clear()
        self.unavailable_until = float("-inf")

    # ---------------------------------------------------------------- the dispatcher's side

    async def intercept(self, request: Request, session: Session) -> Reply | None:
        """The reply a fault gives ``request`` (None: let the handler answer); may close the connection."""
        self.requests.append(
            RequestRecord(
                request.api_key,
                ApiKey.name_of(request.api_key),
                request.version,
                request.client_id,
                request.correlation_id,
                session.peer,
            )
        )
        if trio.current_time() < self.unavailable_until:
            raise CloseConnection("broker made unavailable by the control API")
        if self.version_caps:
            capped = versions.check(request, self.version_caps)
            if capped is not None:
                return capped
        fault = next((f for f in self.faults if f.matches(request, self.topic_names)), None)
        if fault is None:
            return None
        fault.count -= 1
        if fault.count <= 0:
            self.faults.remove(fault)
        if fault.delay_s:
            await trio.sleep(fault.delay_s)
        if fault.drop:
            raise CloseConnection(f"dropped by an injected fault on {ApiKey.name_of(fault.api_key)}")
        if fault.error is not None:
            log.info(
                "injected fault: %s v%d answered with error %d",
                ApiKey.name_of(request.api_key),
                request.version,
                fault.error,
            )
            return error_reply(request, fault.error)
        return None
