"""The group's committed offsets: OffsetFetch, OffsetCommit, auto-commit.

Everything here runs in the consumer's I/O thread and talks to the group's
coordinator (:class:`~hmb_client.consumer.coordinator.CoordinatorLink`, found
on demand).  Requests go out at the newest version both sides share.

Rules of this module:

* A commit names the generation and member id the group member gives
  (:class:`~hmb_client.consumer.group.Generation`); a consumer with
  self-assigned partitions commits with generation -1 and no member id, as
  Kafka 0.8.2 consumers did.  While its group rebalances a member's commits
  are refused (RebalanceInProgressError), as Kafka's coordinator would.
* With ``enable_auto_commit`` changed positions are committed every
  ``auto_commit_interval_ms``; a failed auto-commit is retried at the next
  interval, never surfaced.
* An asynchronous commit's callback runs in the I/O thread, once, with the
  error or None; a failing callback is logged and does not stop the thread.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import trio

from hmb_client.cluster import Cluster
from hmb_client.consumer.config import ConsumerConfig
from hmb_client.consumer.coordinator import CoordinatorLink
from hmb_client.consumer.group import Generation
from hmb_client.consumer.retry import retrying
from hmb_client.errors import KafkaError
from hmb_client.request_bodies import (
    OFFSETS_BY_TOPIC_ID,
    offset_commit_body,
    offset_fetch_answer,
    offset_fetch_body,
    offsets_version,
    topic_name,
)
from hmb_client.structs import OffsetAndMetadata, TopicPartition
from kproto import ApiKey

log = logging.getLogger(__name__)

CommitCallback = Callable[[dict[TopicPartition, OffsetAndMetadata], BaseException | None], object]
#: The generation a commit names (None: not a member); raises while the group rebalances.
GenerationSource = Callable[[], Generation | None]


class GroupOffsets:
    """``group_id``'s committed offsets, as one consumer reads and writes them."""

    def __init__(self, config: ConsumerConfig, cluster: Cluster, generation: GenerationSource) -> None:
        assert config.group_id is not None
        self._config = config
        self._group_id = config.group_id
        self._cluster = cluster
        self._link = CoordinatorLink(cluster, config.group_id)
        self._generation = generation
        self._last_committed: dict[TopicPartition, int] = {}  # what auto-commit need not repeat
        self._async_commits: set[trio.Event] = set()

    async def fetch(self, tps: list[TopicPartition]) -> dict[TopicPartition, int | None]:
        """OffsetFetch (v1+): the committed offsets (None: nothing committed)."""
        ids = self._topic_ids()
        version = offsets_version(
            await self._link.version(ApiKey.OFFSET_FETCH), ids, (tp.topic for tp in tps)
        )
        by_id = ids if version >= OFFSETS_BY_TOPIC_ID else None
        response = await self._link.request(
            ApiKey.OFFSET_FETCH, version, offset_fetch_body(self._group_id, tps, version, by_id)
        )
        error, topics = offset_fetch_answer(response, version)
        self._link.check(error, "fetching offsets")
        names = {topic_id: name for name, topic_id in ids.items()}
        out: dict[TopicPartition, int | None] = {}
        for t in topics:
            name = topic_name(t, version, names)
            for pr in t.partitions:
                self._link.check(pr.error_code, f"fetching the offset of {name}-{pr.partition_index}")
                out[TopicPartition(name, pr.partition_index)] = (
                    pr.committed_offset if pr.committed_offset >= 0 else None
                )
        return out

    async def commit(self, offsets: dict[TopicPartition, OffsetAndMetadata]) -> None:
        """OffsetCommit at the best common version, naming our generation when subscribed."""
        generation = self._generation()
        ids = self._topic_ids()
        version = offsets_version(
            await self._link.version(ApiKey.OFFSET_COMMIT), ids, (tp.topic for tp in offsets)
        )
        by_id = ids if version >= OFFSETS_BY_TOPIC_ID else None
        if generation is None:
            body = offset_commit_body(self._group_id, offsets, topic_ids=by_id)
        else:
            body = offset_commit_body(
                self._group_id, offsets, generation.generation_id, generation.member_id, by_id
            )
        response = await self._link.request(ApiKey.OFFSET_COMMIT, version, body)
        names = {topic_id: name for name, topic_id in ids.items()}
        for t in response.topics:
            for pr in t.partitions:
                name = topic_name(t, version, names)
                self._link.check(pr.error_code, f"committing for {name}-{pr.partition_index}")
        for tp, om in offsets.items():
            self._last_committed[tp] = om.offset

    def _topic_ids(self) -> dict[str, bytes]:
        """The topic ids the last metadata gave (v10 of the offset APIs names topics by them)."""
        return {name: info.topic_id for name, info in self._cluster.topics.items()}

    def forget(self, partitions: list[TopicPartition]) -> None:
        """Newly assigned partitions: their next position is committed even if unchanged."""
        for tp in partitions:
            self._last_committed.pop(tp, None)

    async def commit_in_background(
        self, offsets: dict[TopicPartition, OffsetAndMetadata], callback: CommitCallback | None
    ) -> None:
        done = trio.Event()
        self._async_commits.add(done)
        error: BaseException | None = None
        try:
            if offsets:
                cfg = self._config
                deadline = time.monotonic() + cfg.request_timeout_ms / 1000
                await retrying(self.commit, offsets, deadline, cfg.retry_backoff_ms / 1000)
        except Exception as exc:  # reported to the callback, never allowed to kill the I/O thread
            error = exc
            if callback is None:
                log.warning("asynchronous commit failed: %s", exc)
        finally:
            done.set()
            self._async_commits.discard(done)
        if callback is not None:
            try:
                callback(offsets, error)
            except Exception:  # a user callback must not break the I/O thread
                log.exception("commit callback failed")

    async def auto_commit(self, positions: Callable[[], dict[TopicPartition, OffsetAndMetadata]]) -> None:
        """Commit changed ``positions()`` every ``auto_commit_interval_ms``."""
        interval = self._config.auto_commit_interval_ms / 1000
        while True:
            await trio.sleep(interval)  # the auto-commit timer
            last = self._last_committed
            changed = {tp: om for tp, om in positions().items() if last.get(tp) != om.offset}
            if changed:
                try:
                    await self.commit(changed)
                except KafkaError as exc:
                    log.warning("auto-commit failed (retried at the next interval): %s", exc)

    async def wait_for_async_commits(self) -> None:
        """Until every asynchronous commit has finished (bounded by the caller)."""
        for done in list(self._async_commits):
            await done.wait()
