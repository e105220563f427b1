"""The README's Python examples run as written.

Examples that talk to a broker at 127.0.0.1:9092 are run against a real
broker process started for the test, its address substituted.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
DEFAULT_ADDRESS = "127.0.0.1:9092"


@pytest.fixture(scope="module")
def bootstrap(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    sys.path.insert(0, str(ROOT / "tests" / "hmb"))
    from broker_process import BrokerProcess

    with BrokerProcess(tmp_path_factory.mktemp("readme") / "data") as broker:
        yield broker.bootstrap


def test_the_readme_has_examples() -> None:
    assert len(BLOCKS) >= 4


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_example_runs(code: str, request: pytest.FixtureRequest) -> None:
    if DEFAULT_ADDRESS in code:
        code = code.replace(DEFAULT_ADDRESS, request.getfixturevalue("bootstrap"))
    exec(compile(code, str(README), "exec"), {"__name__": "readme_example"})


def test_the_covered_versions_table_matches_the_registry() -> None:
    """The README's "What is covered" table is what kproto actually declares."""
    from kproto.registry import supported_versions

    text = README.read_text()
    rows = re.findall(r"^\| [A-Za-z]+ \((\d+)\) \| (\d+)(?:\u2013(\d+))? \|$", text, flags=re.MULTILINE)
    table = {int(key): (int(low), int(high or low)) for key, low, high in rows}
    assert table == supported_versions()
