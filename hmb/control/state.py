"""What a test may read of a broker's state, and its seed and snapshot as JSON lines.

Rules:

* Reading never changes anything: records come from the log files through
  the log's own read path, groups and offsets from the coordinator's and
  the offset store's memory.
* The seed/snapshot file is JSON lines, one object per line, of three kinds
  told apart by their keys::

      {"topic": "orders", "partitions": 3}                       a topic
      {"topic": "orders", "partition": 0, "key": "k", "value": "v",
       "headers": [["h", "x"]], "timestamp": 1700000000000}      a record
      {"group": "billing", "topic": "orders", "partition": 0,
       "offset": 12, "metadata": ""}                             a committed offset

  Keys, values and header values are UTF-8 text, or ``{"base64": "..."}``
  when they are not text, or null.  A snapshot lists topics first, then
  records in offset order, then committed offsets, so seeding a broker from
  it rebuilds the same partitions, with the records in the same order
  (offsets restart at the log start); internal topics (``__*``) are left out.
* A seed is checked whole before anything is written: a bad line raises
  :class:`ValueError` naming the line and the broker is unchanged.
"""

from __future__ import annotations

import base64
import json
import struct
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from hmb.groups.offsets import CommitEntry
from kproto.records.convert import read_records
from kproto.records.default_builder import RecordBatchBuilder

if TYPE_CHECKING:
    from hmb.api.context import Services
    from hmb.log.partition import PartitionLog

_ENTRY_HEAD = struct.Struct(">qiib")  # base offset, length, leader epoch / crc, magic
_LAST_OFFSET_DELTA = struct.Struct(">i")  # at byte 23 of a v2 batch


# ---------------------------------------------------------------- inspect


def partition_log(services: Services, topic: str, partition: int) -> PartitionLog:
    plog = services.logs.get(topic, partition)
    if plog is None:
        raise KeyError(f"no partition {topic}-{partition}")
    return plog


def records(services: Services, topic: str, partition: int, start: int | None = None) -> list[dict[str, Any]]:
    """Every record of a partition from ``start`` (default: the log start), in offset order."""
    plog = partition_log(services, topic, partition)
    offset = plog.log_start_offset if start is None else max(start, plog.log_start_offset)
    out: list[dict[str, Any]] = []
    while offset < plog.high_watermark:
        with plog.read(offset, 1 << 20, min_one=True) as region:
            data = region.read() if region is not None else b""
        if not data:
            break
        out += [
            {
                "offset": r.offset,
                "timestamp": r.timestamp,
                "key": r.key,
                "value": r.value,
                "headers": list(r.headers),
            }
            for r in read_records(data)
            if r.offset >= offset
        ]
        offset = max(offset + 1, _next_offset(data))
    return out


def _next_offset(data: bytes) -> int:
    """The offset after the last whole entry (batch or message) in ``data``."""
    pos, nxt = 0, 0
    while pos + _ENTRY_HEAD.size <= len(data):
        base, length, _, magic = _ENTRY_HEAD.unpack_from(data, pos)
        if pos + 12 + length > len(data):
            break
        last = base + _LAST_OFFSET_DELTA.unpack_from(data, pos + 23)[0] if magic >= 2 else base
        nxt = last + 1
        pos += 12 + length
    return nxt


def watermarks(services: Services, topic: str, partition: int) -> dict[str, int]:
    plog = partition_log(services, topic, partition)
    return {"log_start_offset": plog.log_start_offset, "high_watermark": plog.high_watermark}


def committed(services: Services, group: str) -> dict[tuple[str, int], int]:
    """The committed offset of each (topic, partition) of ``group``."""
    return {tp: c.offset for tp, c in services.offsets.of_group(group).items()}


def group(services: Services, group_id: str) -> dict[str, Any]:
    """State, generation, leader and each member's client id, host and assignment bytes."""
    g = services.groups.groups.get(group_id)
    if g is None:
        raise KeyError(f"no group {group_id!r}")
    return {
        "state": g.state.name,
        "generation_id": g.generation_id,
        "protocol_type": g.protocol_type,
        "protocol": g.protocol_name,
        "leader": g.leader,
        "members": {
            mid: {"client_id": m.client_id, "client_host": m.client_host, "assignment": m.assignment}
            for mid, m in g.members.items()
        },
    }


def producers(services: Services, topic: str, partition: int) -> dict[int, dict[str, int]]:
    """Idempotent producers the partition knows: producer id -> epoch and last sequence."""
    plog = partition_log(services, topic, partition)
    return {
        pid: {"epoch": e.epoch, "last_sequence": e.last_seq} for pid, e in plog.producers.producers.items()
    }


# ---------------------------------------------------------------- snapshot and seed


def as_json_bytes(data: bytes | None) -> Any:
    """Bytes as JSON: text when UTF-8, else ``{"base64": ...}``; None stays null."""
    if data is None:
        return None
    try:
        return data.decode()
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(data).decode()}


def from_json_bytes(value: Any, where: str) -> bytes | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, dict) and isinstance(value.get("base64"), str):
        return base64.b64decode(value["base64"], validate=True)
    raise ValueError(f"{where}: expected text, {{'base64': ...}} or null, got {value!r}")


def snapshot(services: Services) -> Iterator[str]:
    """The broker's topics, records and committed offsets as JSON lines (see the module header)."""
    topics = {t: len(logs) for t, logs in sorted(services.logs.topics.items()) if not t.startswith("__")}
    for topic, count in topics.items():
        yield json.dumps({"topic": topic, "partitions": count})
    for topic, count in topics.items():
        for p in range(count):
            for r in records(services, topic, p):
                line = {
                    "topic": topic,
                    "partition": p,
                    "offset": r["offset"],
                    "timestamp": r["timestamp"],
                    "key": as_json_bytes(r["key"]),
                    "value": as_json_bytes(r["value"]),
                    "headers": [[k, as_json_bytes(v)] for k, v in r["headers"]],
                }
                yield json.dumps(line)
    for g in sorted(services.offsets.groups()):
        for (topic, p), c in services.offsets.of_group(g).items():
            yield json.dumps(
                {"group": g, "topic": topic, "partition": p, "offset": c.offset, "metadata": c.metadata}
            )


def _parse_seed(lines: Iterable[str]) -> tuple[dict[str, int], dict[tuple[str, int], list[Any]], list[Any]]:
    topics: dict[str, int] = {}
    batches: dict[tuple[str, int], list[Any]] = {}
    commits: list[Any] = []
    for n, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        where = f"seed line {n}"
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{where}: not JSON ({exc})") from None
        if not isinstance(obj, dict) or not isinstance(obj.get("topic"), str):
            raise ValueError(f"{where}: expected an object with a 'topic'")
        topic = obj["topic"]
        if "group" in obj:
            commits.append(
                (obj["group"], topic, int(obj["partition"]), int(obj["offset"]), obj.get("metadata", ""))
            )
        elif "partitions" in obj:
            count = obj["partitions"]
            if not isinstance(count, int) or count < 1:
                raise ValueError(f"{where}: 'partitions' must be a positive integer")
            topics[topic] = count
        elif "partition" in obj:
            part = obj["partition"]
            if not isinstance(part, int) or part < 0:
                raise ValueError(f"{where}: 'partition' must be a non-negative integer")
            headers = [(str(k), from_json_bytes(v, where)) for k, v in obj.get("headers", [])]
            record = (
                from_json_bytes(obj.get("key"), where),
                from_json_bytes(obj.get("value"), where),
                obj.get("timestamp"),
                headers,
            )
            batches.setdefault((topic, part), []).append(record)
            topics.setdefault(topic, 1)
            topics[topic] = max(topics[topic], part + 1)
        else:
            raise ValueError(f"{where}: neither a topic, a record nor a committed offset")
    return topics, batches, commits


async def seed(services: Services, lines: Iterable[str], now_ms: int) -> dict[str, int]:
    """Create the topics, append the records and commit the offsets of a seed; returns counts."""
    topics, batches, commits = _parse_seed(lines)
    for topic, count in topics.items():
        existing = services.logs.topics.get(topic)
        if existing is not None and len(existing) < count:
            raise ValueError(
                f"topic {topic} exists with {len(existing)} partition(s), the seed needs {count}"
            )
    for topic, count in topics.items():
        await services.logs.create_topic_async(topic, count)
    appended = 0
    for (topic, part), recs in batches.items():
        plog = partition_log(services, topic, part)
        limit = min(plog.config.segment_bytes // 2, 1 << 20)  # batches that fit any segment size
        builder, size = RecordBatchBuilder(), 0
        for key, value, ts, headers in recs:
            record_size = (
                32 + len(key or b"") + len(value or b"") + sum(len(k) + len(v or b"") for k, v in headers)
            )
            if size and size + record_size > limit:
                await plog.append(builder.build())
                builder, size = RecordBatchBuilder(), 0
            builder.append(key, value, now_ms if ts is None else int(ts), headers)
            size += record_size
        await plog.append(builder.build())
        appended += len(recs)
    by_group: dict[str, list[CommitEntry]] = {}
    for g, topic, part, offset, metadata in commits:
        by_group.setdefault(g, []).append(CommitEntry(topic, part, offset, metadata))
    for g, entries in by_group.items():
        await services.offsets.commit(g, entries)
    return {"topics": len(topics), "records": appended, "commits": len(commits)}
