"""The process's open-files limit against what the log dirs need.

Every partition holds its active segment's ``.log`` open, and its ``.index``
and ``.timeindex`` once mapped; each connection takes one more descriptor.  A broker with
10,000 partitions under the usual soft limit of 1,024 would fail with
EMFILE at the first busy moment, far from the cause.  So, as Kafka's
start-up scripts advise, the soft limit is raised to the hard limit at start,
and a limit still too low is logged once, clearly, with what to do.
"""

from __future__ import annotations

import logging
import resource

log = logging.getLogger(__name__)

FILES_PER_PARTITION = 3  # the active segment's .log, and its mapped .index and .timeindex
FILES_FOR_CONNECTIONS = 1024  # headroom for clients and everything else


def files_needed(partitions: int) -> int:
    return partitions * FILES_PER_PARTITION + FILES_FOR_CONNECTIONS


def check_open_files(partitions: int) -> int:
    """Raise the soft RLIMIT_NOFILE to the hard one; warn when it stays below the need.

    Returns the soft limit in force afterwards.
    """
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        target = hard if hard != resource.RLIM_INFINITY else max(soft, files_needed(partitions))
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError) as exc:  # pragma: no cover - a platform that refuses
            log.warning("could not raise the open-files limit from %d to %d: %s", soft, target, exc)
    needed = files_needed(partitions)
    if soft != resource.RLIM_INFINITY and soft < needed:
        log.warning(
            "open-files limit %d is below the %d the log dirs need (%d partitions x %d, plus %d for "
            "connections): the broker will fail with 'Too many open files'; raise the hard limit "
            "(ulimit -Hn, or LimitNOFILE= in a systemd unit)",
            soft,
            needed,
            partitions,
            FILES_PER_PARTITION,
            FILES_FOR_CONNECTIONS,
        )
    return soft
