"""Client tests run against the real broker process (and Tansu): the shared fixtures of tests/support."""

from __future__ import annotations

from broker_process import (  # noqa: F401 - the shared fixtures
    broker,
    in_process_broker,
    make_broker,
    make_in_process_broker,
    process_broker,
    tansu,
)
