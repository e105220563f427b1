"""Incremental fetch sessions (KIP-227): a consumer names its partitions once, then only changes.

Fetch v7+ carries ``session_id`` and ``session_epoch``.  What each request
means, as Kafka's broker reads it (one table, :func:`begin`):

=================  ============  ===============================================
session_epoch      session_id    meaning
=================  ============  ===============================================
-1 (final)         0             a full fetch without a session
-1 (final)         n             close session n, then a full fetch without one
0 (initial)        0 or n        close session n if given; a full fetch that
                                 opens a new session (its id in the answer)
e > 0              n             an incremental fetch of session n, its e-th:
                                 the request lists only partitions added or
                                 changed, ``forgotten_topics_data`` those left
=================  ============  ===============================================

Rules:

* The session remembers each partition's fetch parameters (offset, size
  limit, epochs) and what the last answer told the client of it (high
  watermark, last stable offset, log start offset).  An incremental answer
  lists a partition only when it has records or an error, or one of those
  three changed; the client keeps what it knew of the others.  A full
  answer lists every partition.
* An unknown session id is FETCH_SESSION_ID_NOT_FOUND, a wrong epoch
  INVALID_FETCH_SESSION_EPOCH: the answer carries only the error (session
  id 0), and the client starts again with a full fetch.  Each answered
  incremental fetch moves the expected epoch on by one.
* Partitions that returned records move to the end of the session's order,
  so that under ``max_bytes`` every partition gets its turn.
* The cache holds ``max.incremental.fetch.session.cache.slots`` sessions.
  When full, a new session takes the place of the least recently used one
  idle for ``EVICTION_MS``, else of the smallest one if the newcomer has
  more partitions; otherwise it is answered without a session (id 0) and
  the client keeps sending full requests, which is always correct.
* Topics are keyed as the request names them: by name up to v12, by id from
  v13; a session opened at one of these is only continued at the same kind.
"""

from __future__ import annotations

import random
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, TypeVar

from hmb.api.context import RequestContext, Services
from hmb.clock import Clock
from kproto import ErrorCode
from kproto.fetch_fast import FIRST_TOPIC_ID, PartitionData, Region

FIRST_SESSION_VERSION = 7
FINAL_EPOCH = -1
INITIAL_EPOCH = 0
NO_SESSION = 0
#: a session idle this long may be evicted for a new one (Kafka's
#: min.incremental.fetch.session.eviction.ms default)
EVICTION_MS = 120_000
_MAX_EPOCH = 2**31 - 1

Key = tuple[str | bytes, int]
"""A partition as the session's requests name it: (topic name or id, partition)."""

R = TypeVar("R", bound=Region)


class SessionPartition(NamedTuple):
    """A partition's fetch parameters, with the fields a Fetch request's partition has."""

    partition: int
    fetch_offset: int
    partition_max_bytes: int
    current_leader_epoch: int = -1
    last_fetched_epoch: int = -1
    log_start_offset: int = -1


class SessionTopic(NamedTuple):
    """A topic of the fetch, with the fields a Fetch request's topic has (one of the two keys)."""

    topic: str
    topic_id: bytes
    partitions: list[SessionPartition]


@dataclass
class FetchSession:
    session_id: int
    by_id: bool
    epoch: int = 1  # the epoch the next incremental request must carry
    partitions: OrderedDict[Key, SessionPartition] = field(default_factory=OrderedDict)
    #: what the last answer told the client: (high watermark, last stable offset, log start)
    reported: dict[Key, tuple[int, int, int]] = field(default_factory=dict)
    last_used_ms: float = 0.0


class FetchSessionCache:
    """The broker's fetch sessions, bounded to ``slots``; counts what happens, for operators and tests."""

    def __init__(self, slots: int, clock: Clock) -> None:
        self.slots = slots
        self.clock = clock
        self.sessions: OrderedDict[int, FetchSession] = OrderedDict()  # least recently used first
        self.created = 0
        self.incremental_fetches = 0
        self.evicted = 0

    def _now_ms(self) -> float:
        return self.clock.monotonic() * 1000

    def get(self, session_id: int) -> FetchSession | None:
        session = self.sessions.get(session_id)
        if session is not None:
            session.last_used_ms = self._now_ms()
            self.sessions.move_to_end(session_id)
        return session

    def remove(self, session_id: int) -> None:
        self.sessions.pop(session_id, None)

    def create(self, by_id: bool, partitions: Iterable[tuple[Key, SessionPartition]]) -> FetchSession | None:
        """A new session over ``partitions``, or None when there is no room for it."""
        wanted = OrderedDict(partitions)
        if (
            not wanted
            or self.slots <= 0
            or (len(self.sessions) >= self.slots and not self._evict(len(wanted)))
        ):
            return None
        session_id = random.randint(1, _MAX_EPOCH)
        while session_id in self.sessions:
            session_id = random.randint(1, _MAX_EPOCH)
        session = FetchSession(session_id, by_id, partitions=wanted, last_used_ms=self._now_ms())
        self.sessions[session_id] = session
        self.created += 1
        return session

    def _evict(self, size: int) -> bool:
        """Make room for a session of ``size`` partitions (the table in the module header)."""
        oldest_id, oldest = next(iter(self.sessions.items()))
        if self._now_ms() - oldest.last_used_ms >= EVICTION_MS:
            victim = oldest_id
        else:
            smallest = min(self.sessions.values(), key=lambda s: len(s.partitions))
            if len(smallest.partitions) >= size:
                return False
            victim = smallest.session_id
        del self.sessions[victim]
        self.evicted += 1
        return True


def cache_of(services: Services) -> FetchSessionCache:
    """The broker's session cache, made on the first fetch that asks for a session."""
    cache = services.fetch_sessions
    if cache is None:
        cache = services.fetch_sessions = FetchSessionCache(
            services.config.max_incremental_fetch_session_cache_slots, services.clock
        )
    return cache


def _key(topic: Any, by_id: bool) -> str | bytes:
    return bytes(topic.topic_id) if by_id else topic.topic


def _params(p: Any) -> SessionPartition:
    return SessionPartition(
        p.partition,
        p.fetch_offset,
        p.partition_max_bytes,
        getattr(p, "current_leader_epoch", -1),
        getattr(p, "last_fetched_epoch", -1),
        getattr(p, "log_start_offset", -1),
    )


def _requested(body: Any, by_id: bool) -> list[tuple[Key, SessionPartition]]:
    return [((_key(t, by_id), p.partition), _params(p)) for t in body.topics for p in t.partitions]


def _as_topics(partitions: Iterable[tuple[Key, SessionPartition]], by_id: bool) -> list[SessionTopic]:
    """Partitions grouped by topic, in order of first appearance, shaped as request topics."""
    topics: dict[str | bytes, list[SessionPartition]] = {}
    for (topic, _index), params in partitions:
        topics.setdefault(topic, []).append(params)
    if by_id:
        return [SessionTopic("", k, ps) for k, ps in topics.items() if isinstance(k, bytes)]
    return [SessionTopic(str(k), b"", ps) for k, ps in topics.items()]


@dataclass
class SessionPlan:
    """What one Fetch request reads and how its answer is cut (:func:`begin`)."""

    topics: Sequence[Any]  # request topics (or SessionTopics) to read
    session_id: int = NO_SESSION
    error: int = ErrorCode.NONE
    session: FetchSession | None = None
    incremental: bool = False
    cache: FetchSessionCache | None = None

    def answer(
        self, topics: list[tuple[str | bytes, list[PartitionData[R]]]]
    ) -> list[tuple[str | bytes, list[PartitionData[R]]]]:
        """The collected ``topics`` as this request's answer: an incremental one keeps only
        what changed; the session remembers what was told."""
        session = self.session
        if session is None:
            return topics
        out = []
        for key, partitions in topics:
            kept = []
            for pd in partitions:
                tp = (key, pd.partition)
                told = (pd.high_watermark, pd.last_stable_offset, pd.log_start_offset)
                has_records = pd.records is not None and _length(pd.records) > 0
                if not self.incremental or has_records or pd.error_code or session.reported.get(tp) != told:
                    kept.append(pd)
                session.reported[tp] = told
                if has_records and tp in session.partitions:
                    session.partitions.move_to_end(tp)
            if kept:
                out.append((key, kept))
        return out


def _length(records: Any) -> int:
    return len(records) if isinstance(records, (bytes, bytearray)) else int(records.length)


def begin(ctx: RequestContext) -> SessionPlan:
    """How to serve this Fetch request: the module header's table."""
    body = ctx.request.body
    version = ctx.request.version
    if version < FIRST_SESSION_VERSION:
        return SessionPlan(body.topics)
    by_id = version >= FIRST_TOPIC_ID
    session_id, epoch = body.session_id, body.session_epoch
    if epoch in (FINAL_EPOCH, INITIAL_EPOCH):
        if session_id != NO_SESSION and ctx.services.fetch_sessions is not None:
            ctx.services.fetch_sessions.remove(session_id)
        if epoch == FINAL_EPOCH:
            return SessionPlan(body.topics)
        cache = cache_of(ctx.services)
        session = cache.create(by_id, _requested(body, by_id))
        if session is None:
            return SessionPlan(body.topics)
        return SessionPlan(body.topics, session.session_id, session=session, cache=cache)
    cache = cache_of(ctx.services)
    session = cache.get(session_id)
    if session is None:
        return SessionPlan([], error=ErrorCode.FETCH_SESSION_ID_NOT_FOUND)
    if session.epoch != epoch or session.by_id != by_id:
        return SessionPlan([], error=ErrorCode.INVALID_FETCH_SESSION_EPOCH)
    session.epoch = 1 if epoch >= _MAX_EPOCH else epoch + 1
    for forgotten in body.forgotten_topics_data:
        key = _key(forgotten, by_id)
        for index in forgotten.partitions:
            session.partitions.pop((key, index), None)
            session.reported.pop((key, index), None)
    for tp, params in _requested(body, by_id):
        session.partitions[tp] = params
    cache.incremental_fetches += 1
    topics = _as_topics(session.partitions.items(), by_id)
    return SessionPlan(topics, session.session_id, session=session, incremental=True, cache=cache)
