"""A follower's copy loop: one task per leader broker, fetching every partition it leads for us.

Rules:

* Before copying a partition (a new leader or epoch), its divergent tail is
  cut: OffsetForLeaderEpoch asks the leader where the follower's latest
  epoch ends there, and the log is truncated to that (or to where the
  follower's own copy of the epoch the leader answered ends, when that is
  earlier), as KIP-101/279.  When the follower never had the epoch the
  leader answered, it cuts to where its own earlier epochs end and asks
  again.  An undefined answer (the leader knows no such epoch) truncates to
  the follower's high watermark.
* Then Fetch v12 with ``replica_id`` = this broker, the log end as fetch
  offset and the latest epoch as ``last_fetched_epoch``: a leader that finds
  the follower diverged answers ``diverging_epoch`` instead of records, and
  the follower cuts there, the same rule again.
* Records are appended as they are (:meth:`PartitionLog.append_replicated`);
  the follower's high watermark is the leader's, never past its own log end,
  and its log start follows the leader's (DeleteRecords, retention there)
  up to its high watermark.
* A follower behind the leader's log start (OFFSET_OUT_OF_RANGE with the
  leader's log start past its end) empties its copy and starts there.
* A partition refused with an epoch or leadership error waits for the next
  view; a connection that fails is opened again after a pause.  Nothing
  here retries in a tight loop.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import trio

from hmb.log.errors import LogError
from hmb.replication.peer import PeerConnection, PeerError
from kproto import ApiKey, CorruptRecordError, ErrorCode

if TYPE_CHECKING:
    from hmb.log.partition import PartitionLog
    from hmb.replication.roles import TP, Following, Replication

log = logging.getLogger(__name__)

FETCH_VERSION = 12  # the first with last_fetched_epoch / diverging_epoch, and replica_id in the body
EPOCH_VERSION = 4
RETRY_S = 0.5  # after a failed connection or a refused partition
RESPONSE_MAX_BYTES = 10 * 1024 * 1024  # Kafka's replica.fetch.response.max.bytes default
CONNECT_TIMEOUT_S = 5.0


class LeaderFetcher:
    """Copies the partitions ``leader`` leads and this broker follows."""

    def __init__(self, replication: Replication, leader: int) -> None:
        self.replication = replication
        self.leader = leader
        self.partitions: dict[TP, Following] = {}
        self._changed = trio.Event()
        self._scope = trio.CancelScope()

    def changed(self) -> None:
        self._changed.set()

    def stop(self) -> None:
        self._scope.cancel()

    @property
    def _config(self) -> Any:
        return self.replication.node.config

    async def run(self) -> None:
        with self._scope:
            while True:
                try:
                    conn = await self._connect()
                except PeerError as exc:
                    log.warning("fetcher for leader %d: %s", self.leader, exc)
                    await self._pause()
                    continue
                try:
                    await self._copy(conn)
                except PeerError as exc:
                    log.warning("fetcher for leader %d: %s; connecting again", self.leader, exc)
                    await self._pause()
                except Exception:  # a fault of this copy loop must not take the broker down
                    log.exception("fetcher for leader %d failed; starting again", self.leader)
                    for following in self.partitions.values():
                        following.truncated = False  # check the tails again before copying
                    await self._pause()
                finally:
                    with trio.CancelScope(shield=True):
                        await conn.aclose()

    async def _pause(self) -> None:
        """Wait for the next view (a changed partition set) or RETRY_S, whichever is first."""
        with trio.move_on_after(RETRY_S):
            await self._changed.wait()
        self._changed = trio.Event()

    async def _connect(self) -> PeerConnection:
        registration = self.replication.node.view.brokers.get(self.leader)
        if registration is None:
            raise PeerError(f"broker {self.leader} is not registered")
        plain = [e for e in registration.endpoints if e.security_protocol == "PLAINTEXT"]
        endpoint = plain[0] if plain else registration.endpoints[0]
        return await PeerConnection.open(endpoint.host, endpoint.port, CONNECT_TIMEOUT_S)

    def _log(self, tp: TP) -> PartitionLog | None:
        return self.replication.node.logs.get(*tp)

    async def _copy(self, conn: PeerConnection) -> None:
        while True:
            if not self.partitions:
                await self._changed.wait()
                self._changed = trio.Event()
                continue
            refused = False
            pending = {tp: f for tp, f in self.partitions.items() if not f.truncated}
            if pending:
                refused = await self._truncate(conn, pending)
            ready = {tp: f for tp, f in self.partitions.items() if f.truncated}
            if ready:
                refused = await self._fetch(conn, ready) or refused
            if refused or not ready:
                await self._pause()

    # ------------------------------------------------------------ truncation

    async def _cut_to(self, plog: PartitionLog, epoch: int, end_offset: int) -> bool:
        """The leader says ``epoch`` ends at ``end_offset``: cut what this copy holds past it.

        True when that settles it; False when this copy never had ``epoch`` (it was cut to
        where its own epochs below it end, and the leader is asked again), as KIP-279."""
        if epoch < 0 or end_offset < 0:
            target, settled = plog.high_watermark, True
        else:
            own_epoch, own_end = plog.end_offset_for_epoch(epoch)
            target = min(end_offset, own_end) if own_end >= 0 else end_offset
            settled = own_epoch == epoch or own_end < 0
        if target < plog.log_end_offset:
            await plog.truncate_to(max(target, plog.log_start_offset))
        return settled

    async def _truncate(self, conn: PeerConnection, pending: dict[TP, Following]) -> bool:
        topics: dict[str, list[dict[str, int]]] = {}
        for (topic, p), f in pending.items():
            plog = self._log((topic, p))
            if plog is None:
                continue
            topics.setdefault(topic, []).append(
                {"partition": p, "current_leader_epoch": f.epoch, "leader_epoch": plog.epochs.latest_epoch}
            )
        if not topics:
            return False
        body = {
            "replica_id": self.replication.me,
            "topics": [{"topic": t, "partitions": ps} for t, ps in topics.items()],
        }
        timeout_s = CONNECT_TIMEOUT_S * 6
        answer = await conn.request(ApiKey.OFFSET_FOR_LEADER_EPOCH, EPOCH_VERSION, body, timeout_s)
        refused = False
        for topic in answer.topics:
            for part in topic.partitions:
                tp = (topic.topic, part.partition)
                following = self.partitions.get(tp)
                plog = self._log(tp)
                if following is None or following is not pending.get(tp) or plog is None:
                    continue
                if part.error_code != ErrorCode.NONE:
                    log.info("%s-%d: OffsetForLeaderEpoch refused: %s", *tp, ErrorCode(part.error_code).name)
                    refused = True
                    continue
                following.truncated = await self._cut_to(plog, part.leader_epoch, part.end_offset)
        return refused

    # ------------------------------------------------------------ copying

    async def _fetch(self, conn: PeerConnection, ready: dict[TP, Following]) -> bool:
        cfg = self._config
        topics: dict[str, list[dict[str, int]]] = {}
        for (topic, p), f in ready.items():
            plog = self._log((topic, p))
            if plog is None:
                continue
            topics.setdefault(topic, []).append(
                {
                    "partition": p,
                    "current_leader_epoch": f.epoch,
                    "fetch_offset": plog.log_end_offset,
                    "last_fetched_epoch": plog.epochs.latest_epoch,
                    "log_start_offset": plog.log_start_offset,
                    "partition_max_bytes": cfg.replica_fetch_max_bytes,
                }
            )
        body = {
            "replica_id": self.replication.me,
            "max_wait_ms": cfg.replica_fetch_wait_max_ms,
            "min_bytes": cfg.replica_fetch_min_bytes,
            "max_bytes": max(RESPONSE_MAX_BYTES, cfg.replica_fetch_max_bytes),
            "isolation_level": 0,
            "session_id": 0,
            "session_epoch": -1,
            "topics": [{"topic": t, "partitions": ps} for t, ps in topics.items()],
            "forgotten_topics_data": [],
            "rack_id": "",
        }
        timeout_s = cfg.replica_fetch_wait_max_ms / 1000 + CONNECT_TIMEOUT_S * 6
        answer = await conn.request(ApiKey.FETCH, FETCH_VERSION, body, timeout_s)
        refused = False
        for topic in answer.responses:
            for part in topic.partitions:
                tp = (topic.topic, part.partition_index)
                following = self.partitions.get(tp)
                plog = self._log(tp)
                if following is None or following is not ready.get(tp) or plog is None:
                    continue  # the role changed while the fetch was out
                refused = not await self._take(tp, following, plog, part) or refused
        return refused

    async def _take(self, tp: TP, f: Following, plog: PartitionLog, part: Any) -> bool:
        """Apply one partition's answer; False when it was refused (wait before asking again)."""
        if part.error_code == ErrorCode.OFFSET_OUT_OF_RANGE:
            if part.log_start_offset > plog.log_end_offset:  # the leader deleted what comes next
                log.warning("%s-%d: behind the leader's log start %d", *tp, part.log_start_offset)
                await plog.restart_at(part.log_start_offset)
                return True
            log.warning("%s-%d: offset %d out of range at the leader", *tp, plog.log_end_offset)
            f.truncated = False  # past the leader's end: ask where the epoch ends again
            return False
        if part.error_code != ErrorCode.NONE:
            log.info("%s-%d: fetch refused: %s", *tp, ErrorCode(part.error_code).name)
            return False
        diverging = getattr(part, "diverging_epoch", None)
        if diverging is not None and diverging.epoch >= 0 and diverging.end_offset >= 0:
            f.truncated = await self._cut_to(plog, diverging.epoch, diverging.end_offset)
            return True
        if part.records:
            try:
                await plog.append_replicated(part.records)
            except (LogError, CorruptRecordError, OSError) as exc:
                log.error("%s-%d: cannot append the leader's records: %s", *tp, exc)
                f.truncated = False
                return False
        plog.set_high_watermark(min(part.high_watermark, plog.log_end_offset))
        start = part.log_start_offset
        if plog.log_start_offset < start <= plog.high_watermark:  # DeleteRecords or retention there
            try:
                await self.replication.node.logs.delete_records(plog, start)
            except (LogError, OSError) as exc:
                log.warning("%s-%d: cannot move the log start to %d: %s", *tp, start, exc)
        return True
