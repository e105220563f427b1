"""Client tests run against the real broker process: the fixtures of tests/hmb."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hmb"))

from broker_process import broker, make_broker, tansu  # noqa: F401 - the shared fixtures
