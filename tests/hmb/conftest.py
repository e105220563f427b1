"""Fixtures for broker tests: a fresh broker process per test (module scope when cheap)."""

from __future__ import annotations

from broker_process import broker, make_broker, tansu  # noqa: F401 - the shared fixtures
