"""Interop tests: third-party clients (librdkafka, kafka-python, aiokafka, kcat) against hmb.

Every module here carries the ``interop`` marker (``pytestmark =
pytest.mark.interop``), so that ``pytest -m "not interop"`` skips them: they
need the clients installed and take minutes.  Collection fails for a module
that forgets it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from broker_process import broker, in_process_broker, make_broker, tansu  # noqa: F401 - the shared fixtures

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    unmarked = sorted(
        {
            item.path.name
            for item in items
            if HERE in item.path.parents and not item.get_closest_marker("interop")
        }
    )
    if unmarked:
        raise pytest.UsageError(f"tests/interop modules without pytestmark = pytest.mark.interop: {unmarked}")
