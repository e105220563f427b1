"""The README's Spark word count runs as written, against a real broker.

It is fenced as ```py, not ```python, so tests/test_readme.py (which
would start a JVM of its own) leaves it to this test, which runs it in
the shared SparkSession: the example's ``getOrCreate()`` returns it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def spark_examples() -> list[str]:
    blocks = re.findall(r"```py\n(.*?)```", README.read_text(), re.S)
    return [b for b in blocks if 'format("hmb")' in b]


def test_the_readme_has_the_spark_example() -> None:
    assert len(spark_examples()) == 1


def test_word_count_example_runs(spark: Any, broker: Any, capsys: pytest.CaptureFixture[str]) -> None:
    code = spark_examples()[0].replace("127.0.0.1:9092", broker.bootstrap)
    exec(compile(code, str(README), "exec"), {"__name__": "readme_example"})
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "[Row(word='the', count=3), Row(word='brown', count=1)]"
    assert printed[1] == "[('brown', 1), ('dog', 1), ('end', 1)]"
