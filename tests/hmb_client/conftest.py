"""Client tests run against the real broker process (and Tansu): the shared fixtures of tests/support."""

from __future__ import annotations

from broker_process import broker, make_broker, tansu  # noqa: F401 - the shared fixtures
