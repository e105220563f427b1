"""The README's Python examples run as written (those that need no broker)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
STANDALONE = [b for b in BLOCKS if "bootstrap" not in b]


def test_the_readme_has_standalone_examples() -> None:
    assert len(STANDALONE) >= 2


@pytest.mark.parametrize("code", STANDALONE, ids=[f"block{i}" for i in range(len(STANDALONE))])
def test_example_runs(code: str, capsys: pytest.CaptureFixture[str]) -> None:
    exec(compile(code, str(README), "exec"), {})
