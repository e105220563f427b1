"""All partitions of the broker: Kafka's ``log.dirs`` layout.

``<log dir>/<topic>-<partition>/`` per partition (topic names may contain
``-``: the partition is what follows the last one).  A ``.kafka_cleanshutdown``
file in a log dir, Kafka's own marker, says the broker stopped cleanly; when
it is missing, every partition's last segment is validated and repaired on
start.  After a clean stop nothing is read at start beyond the directory
names: a partition reads its files at its first use, and a background task
(:meth:`LogManager.run_loader`, ``num.recovery.threads.per.data.dir`` worker
threads per log dir) reads the rest, so that a broker with 10,000 partitions
answers Metadata as soon as it listens.

Placement and every per-partition step cost the same whatever the number of
partitions: the partition count of each log dir is kept, not recounted.

Rules: topic names follow Kafka's (``[a-zA-Z0-9._-]``, at most 249
characters, not ``.`` or ``..``); this module refuses others so that no
request can name a path outside the log directory.

Deleting a topic is Kafka's two steps: each partition directory is renamed
to ``<topic>-<p>.<uuid>-delete`` (so the name is free at once for a new
topic of the same name) and then removed; a ``-delete`` directory left by a
crash in between is removed at the next start.  The log dirs also hold the
cluster id and the producer-id block (:mod:`hmb.log.meta`).
"""

from __future__ import annotations

import logging
import re
import shutil
import time
import uuid
from collections.abc import Callable, Generator, Mapping
from functools import partial
from pathlib import Path

import trio

from hmb.log import start_offsets, topic_ids
from hmb.log.config import NEVER, LogConfig
from hmb.log.limits import check_open_files
from hmb.log.meta import ProducerIdManager, load_cluster_id
from hmb.log.partition import PartitionLog
from hmb.log.settings_store import SettingsStore

log = logging.getLogger(__name__)

CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown"
_LEGAL = re.compile(r"[a-zA-Z0-9._-]{1,249}")
DELETE_SUFFIX = "-delete"


class InvalidTopicError(ValueError):
    """A topic name Kafka would refuse (INVALID_TOPIC_EXCEPTION)."""


class TopicBeingDeletedError(Exception):
    """A topic of this name is still being deleted: it cannot be created again yet."""


class TopicBeingCreatedError(Exception):
    """A topic of this name is being created by another request."""


class PartitionCountError(ValueError):
    """A new partition count that is not an increase (INVALID_PARTITIONS)."""


def validate_topic_name(name: str) -> None:
    if name in (".", "..") or not _LEGAL.fullmatch(name):
        raise InvalidTopicError(
            f"invalid topic name {name!r}: use 1-249 characters from [a-zA-Z0-9._-], not '.' or '..'"
        )


def _load_all(logs: list[PartitionLog]) -> None:
    """Read the files of ``logs`` (in a worker thread: each waits on its own lock)."""
    for plog in logs:
        if not plog.deleted:
            plog.load()


def _floor(logs: list[PartitionLog]) -> int:
    """One past the largest producer id the batches of ``logs`` carry."""
    return max((plog.max_producer_id() for plog in logs), default=-1) + 1


def _remove_all(directories: list[Path]) -> None:
    """Remove renamed partition directories, in one worker thread rather than one each."""
    for directory in directories:
        shutil.rmtree(directory, ignore_errors=True)


async def _run_steps(steps: Generator[int, None, None], yield_every: int) -> None:
    """Run a creation generator, letting other tasks run every ``yield_every`` steps."""
    try:
        for done in steps:
            if done % yield_every == 0:
                await trio.sleep(0)
    finally:
        steps.close()  # cancelled half-way: the generator removes what it created


TOPIC_CONFIGS = "topic-configs"  # the directory of the topics' overrides, in the first log dir


class LogManager:
    """Owns every :class:`PartitionLog` of the broker."""

    LOAD_CHUNK = 64  # partitions read per worker-thread call by run_loader

    def __init__(self, log_dirs: list[Path], config: LogConfig, *, recovery_threads: int = 1) -> None:
        self.log_dirs = [Path(d) for d in log_dirs]
        self.config = config  # the broker's defaults, every topic's starting point
        self.recovery_threads = recovery_threads  # num.recovery.threads.per.data.dir
        self.topic_configs = SettingsStore(self.log_dirs[0] / TOPIC_CONFIGS)
        #: topic name <-> its id (KIP-516; hmb.log.topic_ids)
        self.topic_ids: dict[str, bytes] = {}
        self.topics_by_id: dict[bytes, str] = {}
        self._settings_changed = trio.Event()  # wakes the flusher when a topic's settings change
        self.topics: dict[str, list[PartitionLog]] = {}
        self._per_dir = {d: 0 for d in self.log_dirs}  # partitions in each log dir
        self._unloaded: list[PartitionLog] = []  # opened lazily at start, for run_loader
        # Names whose deletion is under way.  Their directories are renamed only once each
        # partition is closed (after an await), so the name must not come back meanwhile:
        # the rename would take the new topic's directory away from under it.
        self.deleting: set[str] = set()
        # Names being created by :meth:`create_topic_async`, which yields between
        # partitions: the name must not be created (or half-seen) a second time meanwhile.
        self.creating: set[str] = set()
        # Topics being given more partitions by :meth:`add_partitions_async` (which yields).
        self.growing: set[str] = set()
        self._cluster_id: str | None = None
        #: the id of the cluster this broker joined, written to meta.properties on first start
        self.joined_cluster_id: str | None = None
        self._producer_ids: ProducerIdManager | None = None
        self.wall: Callable[[], float] = time.time  # the broker's clock (hmb.clock): retention, segment.ms

    @property
    def cluster_id(self) -> str:
        assert self._cluster_id is not None, "LogManager.load() first"
        return self._cluster_id

    @property
    def producer_ids(self) -> ProducerIdManager:
        assert self._producer_ids is not None, "LogManager.load() first"
        return self._producer_ids

    # ---------------------------------------------------------------- loading

    def load(self) -> None:
        """Open every partition found in the log dirs."""
        found: dict[str, dict[int, Path]] = {}
        clean_dirs = set()
        for d in self.log_dirs:
            d.mkdir(parents=True, exist_ok=True)
            marker = d / CLEAN_SHUTDOWN_FILE
            if marker.exists():
                clean_dirs.add(d)
                marker.unlink()
            for sub in d.iterdir():
                if sub.is_dir() and sub.name.endswith(DELETE_SUFFIX):
                    log.info("removing %s, a topic deletion interrupted by a stop", sub)
                    shutil.rmtree(sub, ignore_errors=True)
                    continue
                if not sub.is_dir() or "-" not in sub.name:
                    continue
                topic, _, part = sub.name.rpartition("-")
                if not part.isdigit():
                    continue
                try:
                    validate_topic_name(topic)
                except InvalidTopicError:
                    log.warning("ignoring directory %s: not a topic-partition", sub)
                    continue
                found.setdefault(topic, {})[int(part)] = sub
        started = time.monotonic()
        self.topic_configs.load(found)
        moved_starts = {key: start for d in self.log_dirs for key, start in start_offsets.read(d).items()}
        clean = len(clean_dirs) == len(self.log_dirs)
        check_open_files(sum(len(parts) for parts in found.values()))
        for topic, parts in sorted(found.items()):
            if sorted(parts) != list(range(len(parts))):
                log.warning("topic %s has partitions %s: gaps are created empty", topic, sorted(parts))
            count = max(parts) + 1
            logs = []
            for p in range(count):
                directory = parts.get(p) or self._pick_dir() / f"{topic}-{p}"
                was_clean = directory.parent in clean_dirs
                # after a clean stop the files are read at first use or by run_loader;
                # otherwise every last segment is validated now, before any request
                plog = PartitionLog.open(
                    directory, topic, p, self.config_of(topic), clean=was_clean, lazy=clean
                )
                plog.deleted_before = moved_starts.get((topic, p), 0)
                logs.append(self._clocked(plog))
                self._count(plog, 1)
            self.topics[topic] = logs
            self._load_topic_id(topic, logs)
        self._cluster_id = load_cluster_id(self.log_dirs, self.joined_cluster_id)
        if clean:
            self._unloaded = self.all_logs()
            # the producer ids the logs hold are read when the first id is handed out
            self._producer_ids = ProducerIdManager(self.log_dirs, partial(_floor, self._unloaded))
        else:
            self._producer_ids = ProducerIdManager(self.log_dirs, _floor(self.all_logs()))
        if found:
            log.info(
                "loaded %d topics, %d partitions in %.2fs%s",
                len(found),
                sum(len(v) for v in self.topics.values()),
                time.monotonic() - started,
                " (their files are read at first use and in the background)"
                if clean
                else " (after an unclean shutdown)",
            )

    def _count(self, plog: PartitionLog, delta: int) -> None:
        parent = plog.directory.parent
        if parent in self._per_dir:
            self._per_dir[parent] += delta

    def _name_topic(self, topic: str, topic_id: bytes) -> None:
        self.topic_ids[topic] = topic_id
        self.topics_by_id[topic_id] = topic

    def _load_topic_id(self, topic: str, logs: list[PartitionLog]) -> None:
        """The id in the topic's first partition directory; one made now for a topic that has none."""
        topic_id = topic_ids.read(logs[0].directory)
        if topic_id is None:
            topic_id = topic_ids.new_topic_id()
            for plog in logs:
                plog.directory.mkdir(parents=True, exist_ok=True)
                topic_ids.write(plog.directory, topic_id)
            log.info("topic %s had no id: it is %s now", topic, topic_ids.as_text(topic_id))
        self._name_topic(topic, topic_id)

    def _pick_dir(self) -> Path:
        """The log dir holding the fewest partitions (Kafka's placement rule)."""
        return min(self.log_dirs, key=self._per_dir.__getitem__)

    async def run_loader(self, *, task_status=trio.TASK_STATUS_IGNORED) -> None:  # type: ignore[no-untyped-def]
        """Read the files of the partitions :meth:`load` left unread, in worker threads:
        ``num.recovery.threads.per.data.dir`` per log dir, :attr:`LOAD_CHUNK` partitions a call."""
        task_status.started()
        pending, self._unloaded = self._unloaded, []
        if not pending:
            return
        started = time.monotonic()
        limiter = trio.CapacityLimiter(max(1, self.recovery_threads) * len(self.log_dirs))
        chunks = [pending[i : i + self.LOAD_CHUNK] for i in range(0, len(pending), self.LOAD_CHUNK)]

        async def worker() -> None:
            while chunks:
                await trio.to_thread.run_sync(_load_all, chunks.pop(), limiter=limiter)

        async with trio.open_nursery() as nursery:
            for _ in range(int(limiter.total_tokens)):
                nursery.start_soon(worker)
        log.info("read the files of %d partitions in %.2fs", len(pending), time.monotonic() - started)

    # ---------------------------------------------------------------- topics

    def _clocked(self, plog: PartitionLog) -> PartitionLog:
        plog.wall = self.wall
        return plog

    def get(self, topic: str, partition: int) -> PartitionLog | None:
        logs = self.topics.get(topic)
        if logs is None or not 0 <= partition < len(logs):
            return None
        return logs[partition]

    # ---------------------------------------------------------------- per-topic settings

    def config_of(self, topic: str) -> LogConfig:
        """``topic``'s settings: the broker's defaults with the topic's overrides applied."""
        overrides = self.topic_configs.overrides(topic)
        return self.config.with_overrides(overrides) if overrides else self.config

    def set_defaults(self, config: LogConfig) -> None:
        """New broker-wide defaults (dynamic broker settings): every topic without its own
        value for a setting follows at once."""
        self.config = config
        for topic, logs in self.topics.items():
            topic_config = self.config_of(topic)
            for plog in logs:
                plog.config = topic_config
        self._settings_changed.set()

    def set_topic_overrides(self, topic: str, overrides: Mapping[str, str]) -> LogConfig:
        """Replace ``topic``'s overrides, durably, and apply them to its partitions now.

        Raises ConfigError (nothing changed) for an unknown setting or a bad value.
        """
        config = self.config.with_overrides(overrides)
        self.topic_configs.set(topic, overrides)
        for plog in self.topics.get(topic, ()):
            plog.config = config
        self._settings_changed.set()
        return config

    def create_topic(
        self, topic: str, partitions: int, overrides: Mapping[str, str] | None = None
    ) -> list[PartitionLog]:
        """Create ``topic`` with ``partitions`` empty partitions (idempotent)."""
        steps = self._create_steps(topic, partitions, overrides)
        for _ in steps:
            pass
        return self.topics[topic]

    async def create_topic_async(
        self,
        topic: str,
        partitions: int,
        overrides: Mapping[str, str] | None = None,
        yield_every: int = 16,
        topic_id: bytes | None = None,
    ) -> list[PartitionLog]:
        """:meth:`create_topic` for a request handler: lets the other connections run
        every ``yield_every`` partitions.  A CreateTopics request may ask for 9,999
        partitions, ~0.4-1 ms of file creation each; in one piece that stalled every
        client of the broker for up to 11 s."""
        await _run_steps(self._create_steps(topic, partitions, overrides, topic_id), yield_every)
        return self.topics[topic]

    def _create_steps(
        self,
        topic: str,
        partitions: int,
        overrides: Mapping[str, str] | None = None,
        topic_id: bytes | None = None,
    ) -> Generator[int, None, None]:
        """Create the partitions one by one, yielding the count so far; all or nothing
        (``topic_id``: the id the cluster gave the topic; None: a new one).

        ``overrides`` are checked first (ConfigError: nothing is created) and stored
        before the first partition, so the topic never exists without them.
        """
        validate_topic_name(topic)
        if topic in self.topics:
            return
        if topic in self.deleting:
            raise TopicBeingDeletedError(f"topic {topic!r} is marked for deletion")
        if topic in self.creating:
            raise TopicBeingCreatedError(f"topic {topic!r} is being created")
        if partitions < 1:
            raise ValueError("a topic needs at least one partition")
        config = self.config.with_overrides(overrides) if overrides else self.config
        logs: list[PartitionLog] = []
        self.creating.add(topic)
        try:
            if overrides:
                self.topic_configs.set(topic, overrides)
            topic_id = topic_id or topic_ids.new_topic_id()
            yield from self._open_new(topic, range(partitions), config, logs, topic_id)
            self.topics[topic] = logs
            self._name_topic(topic, topic_id)
            if overrides:
                self._settings_changed.set()
        except BaseException:
            # all or nothing: half a topic on disk would come back as a topic at the next start
            self._discard(logs)
            self.topic_configs.remove(topic)
            raise
        finally:
            self.creating.discard(topic)
        log.info("created topic %s with %d partition(s)", topic, partitions)

    def _open_new(
        self, topic: str, numbers: range, config: LogConfig, into: list[PartitionLog], topic_id: bytes
    ) -> Generator[int, None, None]:
        """Make empty partitions ``numbers`` of ``topic`` into ``into``, yielding how many so far."""
        for done, p in enumerate(numbers, 1):
            plog = PartitionLog.create(self._pick_dir() / f"{topic}-{p}", topic, p, config)
            topic_ids.write(plog.directory, topic_id)
            into.append(self._clocked(plog))
            self._count(plog, 1)
            yield done

    def _discard(self, logs: list[PartitionLog]) -> None:
        """Close and remove partitions made by a step that failed or was cancelled."""
        for plog in logs:
            plog.close()
            self._count(plog, -1)
            shutil.rmtree(plog.directory, ignore_errors=True)

    def add_partitions(self, topic: str, count: int) -> list[PartitionLog]:
        """Grow ``topic`` to ``count`` partitions (KeyError: no such topic; PartitionCountError:
        not an increase)."""
        for _ in self._grow_steps(topic, count):
            pass
        return self.topics[topic]

    async def add_partitions_async(self, topic: str, count: int, yield_every: int = 16) -> list[PartitionLog]:
        """:meth:`add_partitions` for a request handler: other connections run every
        ``yield_every`` new partitions, as while creating a topic."""
        await _run_steps(self._grow_steps(topic, count), yield_every)
        return self.topics[topic]

    def _grow_steps(self, topic: str, count: int) -> Generator[int, None, None]:
        """Open the new partitions one by one; all or nothing.

        Clients see the new count at once when the last one is open (Metadata
        never shows half of them); until then the topic's name is in
        :attr:`growing` and a second request to grow it is refused.
        """
        current = self.topics.get(topic)
        if current is None or topic in self.deleting:
            raise KeyError(topic)
        if topic in self.growing:
            raise PartitionCountError(f"topic {topic!r} is already being given more partitions")
        if count <= len(current):
            raise PartitionCountError(
                f"topic {topic!r} has {len(current)} partition(s); {count} would not be an increase"
            )
        added: list[PartitionLog] = []
        self.growing.add(topic)
        try:
            topic_id = self.topic_ids.get(topic) or topic_ids.new_topic_id()
            yield from self._open_new(
                topic, range(len(current), count), self.config_of(topic), added, topic_id
            )
            if self.topics.get(topic) is not current:  # deleted (or replaced) meanwhile
                raise KeyError(topic)
            self.topics[topic] = current + added
        except BaseException:
            self._discard(added)
            raise
        finally:
            self.growing.discard(topic)
        log.info("topic %s now has %d partition(s)", topic, count)

    async def delete_topic(self, topic: str) -> None:
        """Remove ``topic`` and its partition directories (KeyError if there is no such topic).

        The topic disappears from :attr:`topics` at once; each partition then
        stops taking appends, closes its files and has its directory renamed
        to ``...-delete`` and removed.
        """
        logs = self.topics.pop(topic)
        self.topics_by_id.pop(self.topic_ids.pop(topic, topic_ids.ZERO), None)
        self.deleting.add(topic)
        try:
            doomed = []
            for plog in logs:
                await plog.delete()
                self._count(plog, -1)
                target = plog.directory.with_name(f"{plog.directory.name}.{uuid.uuid4().hex}{DELETE_SUFFIX}")
                try:
                    plog.directory.rename(target)
                except OSError as exc:
                    log.error("could not rename %s for deletion: %s", plog.directory, exc)
                    target = plog.directory
                doomed.append(target)
        finally:
            self.deleting.discard(topic)
        self.topic_configs.remove(topic)
        for log_dir in {plog.directory.parent for plog in logs if plog.deleted_before > 0}:
            # its moved starts must not reach a topic created later under the same name
            self._write_start_offsets(log_dir)
        await trio.to_thread.run_sync(_remove_all, doomed)
        log.info("deleted topic %s (%d partition(s))", topic, len(logs))

    def all_logs(self) -> list[PartitionLog]:
        return [plog for logs in self.topics.values() for plog in logs]

    # ---------------------------------------------------------------- background work

    async def run_retention(self, interval_s: float, *, task_status=trio.TASK_STATUS_IGNORED) -> None:  # type: ignore[no-untyped-def]
        """Apply retention every ``interval_s`` (log.retention.check.interval.ms), by the broker's clock."""
        task_status.started()
        while True:
            await trio.sleep(interval_s)
            await self.apply_retention(self.wall())

    async def apply_retention(self, now: float) -> None:
        """One retention pass over every partition, as if the epoch time were ``now``."""
        for plog in self.all_logs():
            await plog.apply_retention(now)

    async def run_flusher(self, *, task_status=trio.TASK_STATUS_IGNORED) -> None:  # type: ignore[no-untyped-def]
        """fsync on each topic's flush.ms even when no append triggers it.

        Ticks at the shortest ``flush.ms`` of any topic; with none set it sleeps
        until a topic's settings change.
        """
        task_status.started()
        while True:
            timed = [plog for plog in self.all_logs() if plog.config.flush_interval_ms < NEVER]
            if not timed:
                self._settings_changed = trio.Event()
                await self._settings_changed.wait()
                continue
            await trio.sleep(min(plog.config.flush_interval_ms for plog in timed) / 1000)
            for plog in timed:
                await plog.flush(only_if_due=True)

    async def delete_records(self, plog: PartitionLog, before: int) -> int:
        """Delete ``plog``'s records below ``before`` and record its new start durably."""
        start = await plog.delete_records(before)
        await trio.to_thread.run_sync(self._write_start_offsets, plog.directory.parent)
        return start

    def _write_start_offsets(self, log_dir: Path) -> None:
        """Rewrite ``log_dir``'s log-start-offset-checkpoint from its partitions' moved starts."""
        moved = [
            (plog.topic, plog.partition, plog.deleted_before)
            for plog in self.all_logs()
            if plog.deleted_before > 0 and plog.directory.parent == log_dir
        ]
        start_offsets.write(log_dir, moved)

    def close(self) -> None:
        """Flush and close everything, then mark the shutdown clean."""
        for d in self.log_dirs:
            self._write_start_offsets(d)
        for plog in self.all_logs():
            plog.close()
        for d in self.log_dirs:
            (d / CLEAN_SHUTDOWN_FILE).touch()
        log.info("log closed cleanly")
