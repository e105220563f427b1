"""System tests: the broker as a real process, fed bad input, crashed, filled up and loaded.

Slow by nature (each test starts at least one broker process); the
in-process handler tests in ``tests/api`` cover the protocol itself.
"""

from __future__ import annotations

from bad_input import (  # noqa: F401 - the brokers the bad-input tests share
    healthy,
    no_auto_create,
    shared,
    short_retention,
    small_messages,
    small_requests,
)
from broker_process import broker, make_broker, tansu  # noqa: F401 - the shared fixtures
