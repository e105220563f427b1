"""Bench tests start the real broker: the shared fixtures of tests/support."""

from __future__ import annotations

from broker_process import make_broker  # noqa: F401 - the shared fixtures
