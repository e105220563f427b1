"""Bench tests start the real broker: the fixtures of tests/hmb."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hmb"))

from broker_process import make_broker  # noqa: F401 - the shared fixtures
