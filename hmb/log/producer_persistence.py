"""Where a partition's producer state comes from at start, and goes at a clean shutdown.

Rules of this module:

* A clean shutdown writes the state at the log end offset to
  ``producer-state.json`` in the partition's directory (empty, no disk
  block, when there is no producer), as Kafka keeps ``.snapshot`` files: a
  clean start then reads no segment through.
* The snapshot is taken only when it is of this very log (same log end
  offset) and readable; otherwise the state is rebuilt from the batch
  headers of the last segments, as after a crash.  A producer idle for
  longer than those segments is unknown afterwards and may continue at any
  sequence, as Kafka treats a producer whose state has expired.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from hmb.log.producer_state import ProducerStateManager
from hmb.log.scan import BadEntry, producer_info
from hmb.log.segment_map import SegmentMap

log = logging.getLogger(__name__)

PRODUCER_SNAPSHOT = "producer-state.json"
#: how many of the last segments a rebuild reads
REBUILD_SEGMENTS = 2


def restore_snapshot(directory: Path, log_end_offset: int) -> ProducerStateManager | None:
    """The state of the clean-shutdown snapshot in ``directory`` if it is of this log, else None."""
    path = directory / PRODUCER_SNAPSHOT
    try:
        text = path.read_text()
        if not text:
            return ProducerStateManager()  # no producer at all when the log was closed
        data = json.loads(text)
        if data["log_end_offset"] != log_end_offset:
            return None
        return ProducerStateManager.restore(data["producers"])
    except FileNotFoundError:
        return None
    except (OSError, ValueError, TypeError, KeyError) as exc:
        log.warning("ignoring %s (%s): producer state rebuilt from the log", path, exc)
        return None


def write_snapshot(directory: Path, producers: ProducerStateManager, log_end_offset: int) -> None:
    """Write the snapshot of ``producers`` at ``log_end_offset`` (``OSError`` when it cannot)."""
    state = producers.snapshot()
    text = json.dumps({"log_end_offset": log_end_offset, "producers": state}) if state else ""
    (directory / PRODUCER_SNAPSHOT).write_text(text)


def rebuild_from_log(segments: SegmentMap, producers: ProducerStateManager) -> None:
    """Add to ``producers`` the batches of the last :data:`REBUILD_SEGMENTS` segments, in order."""
    for seg in segments.values()[-REBUILD_SEGMENTS:]:
        for entry in seg.entries():
            if isinstance(entry, BadEntry):
                break
            info = producer_info(seg.fd, entry)
            if info is not None:
                producers.record(
                    info.producer_id,
                    info.producer_epoch,
                    info.base_sequence,
                    info.record_count,
                    info.base_offset,
                    info.last_offset,
                )
