"""Topic ids (KIP-516): a UUID per topic, kept in Kafka's ``partition.metadata`` files.

Newer requests name topics by id rather than by name (Metadata v10+, Fetch
v13+, DeleteTopics v6+), so that a topic deleted and made again under the
same name is a different topic.  Each partition directory holds the id, in
Kafka's own file::

    version: 0
    topic_id: <the 16 bytes in URL-safe base64, without padding>

Rules: an id is made when its topic is made (random, never all zeros, and
never one whose text starts with ``-``, which Kafka's tools would take for a
flag); a topic loaded without the file (made before topic ids) gets one
then, written for the next start; the first partition's file speaks for the
topic.
"""

from __future__ import annotations

import base64
import logging
import uuid
from pathlib import Path

log = logging.getLogger(__name__)

FILE_NAME = "partition.metadata"
ZERO = bytes(16)  # "no id", as the protocol writes it


def new_topic_id() -> bytes:
    while True:
        raw = uuid.uuid4().bytes
        if raw != ZERO and not as_text(raw).startswith("-"):
            return raw


def as_text(topic_id: bytes) -> str:
    """Kafka's text form of an id (URL-safe base64, no padding)."""
    return base64.urlsafe_b64encode(topic_id).rstrip(b"=").decode()


def write(directory: Path, topic_id: bytes) -> None:
    (directory / FILE_NAME).write_text(f"version: 0\ntopic_id: {as_text(topic_id)}\n")


def read(directory: Path) -> bytes | None:
    """The id in ``directory``'s ``partition.metadata``; None when there is none or it cannot be read."""
    path = directory / FILE_NAME
    try:
        fields = dict(line.split(": ", 1) for line in path.read_text().splitlines() if ": " in line)
        raw = base64.urlsafe_b64decode(fields["topic_id"] + "==")
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError) as exc:
        log.warning("cannot read %s (%s): the topic gets a new id", path, exc)
        return None
    return raw if len(raw) == 16 and raw != ZERO else None
