"""Settings changed at run time, kept on disk: a topic's overrides, the broker's dynamic values.

Each resource's settings are the ``name=value`` pairs a client gave, kept as
text exactly as given, one properties file per resource in a directory of
the first log dir:

    topic-configs/<topic>.properties      a topic's overrides (``retention.ms``, ...)
    broker-configs/<broker id>.properties this broker's dynamic settings
    broker-configs/cluster-default.properties  every broker's dynamic defaults

Rules:

* Only overrides are stored; a topic's effective configuration is the
  broker's defaults with its overrides applied
  (:meth:`hmb.log.config.TopicConfig.with_overrides`), so changing a
  broker-wide default later reaches every topic that did not override it
  (Kafka's precedence: topic override > broker default).
* A file is written beside its final name, fsynced, renamed into place and
  the directory fsynced, so a crash leaves either the old or the new
  settings, never half a file.
* A topic's file is written before its partitions are created and removed
  after they are, so a crash in between leaves settings without a topic,
  never a topic without its settings; :meth:`SettingsStore.load` drops the
  former when told which resources exist.
* The directory names hold no partition number, so the log's scan for
  ``<topic>-<partition>`` directories passes them by.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from pathlib import Path

from hmb.log.meta import sync_directory, write_durably

log = logging.getLogger(__name__)

SUFFIX = ".properties"


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace("=", "\\=")


def _unescape(text: str) -> str:
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            out.append("\n" if nxt == "n" else nxt)
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _split(line: str) -> tuple[str, str]:
    """``key=value`` where a ``=`` in the key is escaped."""
    i = 0
    while i < len(line):
        if line[i] == "\\":
            i += 2
            continue
        if line[i] == "=":
            return _unescape(line[:i]), _unescape(line[i + 1 :])
        i += 1
    raise ValueError(f"no '=' in {line!r}")


class SettingsStore:
    """The stored settings of every resource of one kind, in memory and on disk."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self._overrides: dict[str, dict[str, str]] = {}

    def load(self, existing: Iterable[str] | None = None) -> None:
        """Read every resource's file; with ``existing``, files of other resources are removed."""
        keep = None if existing is None else set(existing)
        self._overrides.clear()
        if not self.directory.is_dir():
            return
        for path in sorted(self.directory.glob(f"*{SUFFIX}")):
            topic = path.name[: -len(SUFFIX)]
            if keep is not None and topic not in keep:
                log.info("removing the settings of %s, which no longer exists", topic)
                path.unlink(missing_ok=True)
                continue
            try:
                lines = path.read_text().splitlines()
                pairs = dict(_split(line) for line in lines if line and not line.startswith("#"))
            except (OSError, ValueError, UnicodeDecodeError) as exc:
                log.error("cannot read the settings of %s from %s: %s", topic, path, exc)
                continue
            self._overrides[topic] = pairs

    def overrides(self, topic: str) -> dict[str, str]:
        """The settings stored for ``topic`` (a copy; empty when none)."""
        return dict(self._overrides.get(topic, {}))

    def set(self, topic: str, overrides: Mapping[str, str]) -> None:
        """Replace ``topic``'s settings, durably (an empty mapping removes the file)."""
        pairs = dict(overrides)
        path = self.directory / f"{topic}{SUFFIX}"
        if not pairs:
            self.remove(topic)
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        text = f"# settings of {topic}\n" + "".join(
            f"{_escape(k)}={_escape(v)}\n" for k, v in sorted(pairs.items())
        )
        write_durably(path, text)
        self._overrides[topic] = pairs

    def remove(self, topic: str) -> None:
        self._overrides.pop(topic, None)
        path = self.directory / f"{topic}{SUFFIX}"
        if path.exists():
            path.unlink()
            sync_directory(self.directory)
