"""The README's Python examples run as written.

Examples that talk to a broker at 127.0.0.1:9092 are run against a real
broker process started for the test, its address substituted.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
DEFAULT_ADDRESS = "127.0.0.1:9092"


@pytest.fixture(scope="module")
def bootstrap(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from broker_process import BrokerProcess  # tests/support, on the path by the pytest settings

    with BrokerProcess(tmp_path_factory.mktemp("readme") / "data") as broker:
        yield broker.bootstrap


def test_the_readme_has_examples() -> None:
    assert len(BLOCKS) >= 4


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_example_runs(code: str, request: pytest.FixtureRequest) -> None:
    if DEFAULT_ADDRESS in code:
        code = code.replace(DEFAULT_ADDRESS, request.getfixturevalue("bootstrap"))
    exec(compile(code, str(README), "exec"), {"__name__": "readme_example"})


def test_the_covered_versions_table_matches_the_registries() -> None:
    """The README's "What is covered" table: what kproto declares and what hmb serves."""
    from hmb.api import HANDLERS
    from kproto.registry import supported_versions

    def versions(low: str, high: str) -> tuple[int, int]:
        return int(low), int(high or low)

    text = README.read_text()
    rows = re.findall(
        r"^\| [A-Za-z]+ \((\d+)\) \| (\d+)(?:\u2013(\d+))? \| (?:(\d+)(?:\u2013(\d+))?|\u2014) \|$",
        text,
        flags=re.MULTILINE,
    )
    declared = {int(key): versions(lo, hi) for key, lo, hi, _slo, _shi in rows}
    served = {int(key): versions(slo, shi) for key, _lo, _hi, slo, shi in rows if slo}
    assert declared == supported_versions()
    assert served == {h.api_key: (h.min_version, h.max_version) for h in HANDLERS.values()}
