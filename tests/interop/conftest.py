"""Interop tests: third-party clients (librdkafka, kafka-python, aiokafka, kcat) against hmb.

Every module here carries the ``interop`` marker: ``pytest -m "not interop"``
skips them (they need the clients installed and take minutes).
"""

from __future__ import annotations

from broker_process import broker, make_broker, tansu  # noqa: F401 - the shared fixtures
