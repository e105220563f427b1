"""DescribeLogDirs v1-v5: every log directory with the size of each partition in it.

A null topic list means every partition; otherwise the partitions named
that exist (unknown ones are left out, as Kafka does).  Every log dir is
listed, also one holding none of the asked partitions.  With a single
broker there is no replication and no reassignment, so ``offset_lag`` is 0
and ``is_future_key`` false.  v4+ report the directory's file system's total
and usable bytes (``os.statvfs``, usable as for an unprivileged writer); a
directory whose file system cannot be read is KAFKA_STORAGE_ERROR, as
Kafka reports an offline dir.  v3+ carry a top-level error code (NONE),
v5 ``is_cordoned`` (never: cordoning is not supported).  v1 is the oldest
version Kafka 4 serves; v2 is the flexible encoding.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from hmb.api.context import Reply, RequestContext
from hmb.api.registry import handles
from hmb.log.partition import PartitionLog
from kproto import ApiKey, ErrorCode

log = logging.getLogger(__name__)


def _wanted(ctx: RequestContext) -> list[PartitionLog]:
    topics = ctx.request.body.topics
    if topics is None:
        return ctx.logs.all_logs()
    out = []
    for t in topics:
        for p in dict.fromkeys(t.partitions):
            plog = ctx.logs.get(t.topic, p)
            if plog is not None:
                out.append(plog)
    return out


def _describe_dir(directory: Path, logs: list[PartitionLog]) -> dict[str, Any]:
    by_topic: dict[str, list[dict[str, Any]]] = {}
    for plog in logs:
        by_topic.setdefault(plog.topic, []).append(
            {
                "partition_index": plog.partition,
                "partition_size": plog.size_bytes,
                "offset_lag": 0,
                "is_future_key": False,
            }
        )
    out: dict[str, Any] = {
        "error_code": ErrorCode.NONE,
        "log_dir": str(directory.absolute()),
        "topics": [{"name": t, "partitions": parts} for t, parts in sorted(by_topic.items())],
        "total_bytes": -1,
        "usable_bytes": -1,
        "is_cordoned": False,
    }
    try:
        fs = os.statvfs(directory)
    except OSError as exc:
        log.error("log dir %s cannot be described: %s", directory, exc)
        out.update(error_code=ErrorCode.KAFKA_STORAGE_ERROR, topics=[])
        return out
    out.update(total_bytes=fs.f_blocks * fs.f_frsize, usable_bytes=fs.f_bavail * fs.f_frsize)
    return out


@handles(ApiKey.DESCRIBE_LOG_DIRS, versions=(1, 5))
async def handle(ctx: RequestContext) -> Reply:
    per_dir: dict[Path, list[PartitionLog]] = {d: [] for d in ctx.logs.log_dirs}
    for plog in _wanted(ctx):
        per_dir.setdefault(plog.directory.parent, []).append(plog)
    return {
        "throttle_time_ms": 0,
        "error_code": ErrorCode.NONE,
        "results": [_describe_dir(d, logs) for d, logs in per_dir.items()],
    }
