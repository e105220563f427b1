"""A one-line progress display for the command-line tools.

Drawn on a terminal only (``stream.isatty()``), redrawn in place with ``\\r``
at most ``max_rate_hz`` times a second, so calling :meth:`Progress.update`
often is cheap.  Output that must stay (per-second report lines) goes
through :meth:`Progress.println`, which clears the bar, prints the line and
redraws the bar below it, so the two never interleave on one terminal line.
When the stream is not a terminal every method except :meth:`println` does
nothing: pipes and files never receive ``\\r`` noise.
"""

from __future__ import annotations

import shutil
import sys
import time
from typing import TextIO


class Progress:
    """``Progress(total=1000, unit="records")``; ``update(done, "12 345 msg/s")``; ``close()``."""

    def __init__(
        self,
        total: float | None = None,
        *,
        unit: str = "",
        stream: TextIO | None = None,
        enabled: bool | None = None,
        max_rate_hz: float = 10.0,
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.total = total
        self.unit = unit
        if enabled is None:
            isatty = getattr(self.stream, "isatty", None)
            enabled = bool(isatty and isatty())
        self.enabled = enabled
        self._min_interval = 1.0 / max_rate_hz
        self._last_draw = -1e9
        self._shown = ""
        self._done = 0.0
        self._text = ""
        self._active = False  # drawn since the last close()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def update(self, done: float, text: str = "", *, force: bool = False) -> None:
        """Record progress; redraw when enough time has passed (or ``force``)."""
        self._done = done
        self._text = text
        if not self.enabled:
            return
        now = time.monotonic()
        if force or now - self._last_draw >= self._min_interval:
            self._last_draw = now
            self._draw()

    def println(self, line: str, stream: TextIO | None = None) -> None:
        """Print a line that stays, keeping the bar (if any) below it."""
        out = stream if stream is not None else self.stream
        if self.enabled and self._shown:
            self._clear()
        print(line, file=out, flush=True)
        if self.enabled and self._active:
            self._draw()

    def close(self) -> None:
        """Remove the bar from the terminal."""
        if self.enabled and self._shown:
            self._clear()
        self._active = False
        self._last_draw = -1e9

    def render(self, width: int) -> str:
        """The bar as text, at most ``width`` characters (separate for testing)."""
        parts = []
        if self.total:
            fraction = min(1.0, max(0.0, self._done / self.total))
            bar_width = max(10, min(30, width // 4))
            filled = int(fraction * bar_width)
            parts.append("[" + "#" * filled + "-" * (bar_width - filled) + f"] {fraction * 100:5.1f}%")
        if self.unit:
            total = f"/{self.total:,.0f}" if self.total else ""
            parts.append(f"{self._done:,.0f}{total} {self.unit}")
        if self._text:
            parts.append(self._text)
        return "  ".join(parts)[: max(1, width - 1)]

    def _draw(self) -> None:
        width = shutil.get_terminal_size((80, 24)).columns
        line = self.render(width)
        pad = " " * max(0, len(self._shown) - len(line))
        self.stream.write("\r" + line + pad)
        self.stream.flush()
        self._shown = line
        self._active = True

    def _clear(self) -> None:
        self.stream.write("\r" + " " * len(self._shown) + "\r")
        self.stream.flush()
        self._shown = ""
