"""Fixtures of the record-format benchmarks."""

from __future__ import annotations

import pytest
from micro_data import KEYS


@pytest.fixture(params=sorted(KEYS))
def keys(request: pytest.FixtureRequest) -> list[bytes | None]:
    return KEYS[str(request.param)]
