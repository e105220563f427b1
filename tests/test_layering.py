"""Which package may import which (the direction of the layers), enforced.

kproto imports none of trio, hmb, hmb_client; hmb never imports hmb_client.
Checked twice: statically over every module's import statements (catches
an import hidden in a function body), and by importing the packages in a
fresh interpreter and looking at what got loaded.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

FORBIDDEN = {
    "kproto": {"trio", "hmb", "hmb_client", "socket", "asyncio"},
    "hmb": {"hmb_client"},
}


def _imported_roots(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    roots: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "import_module":
            if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                roots.add(node.args[0].value.split(".")[0])
    return roots


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_no_forbidden_imports_in_source(package: str) -> None:
    files = sorted((ROOT / package).rglob("*.py"))
    assert files, f"no modules found in {package}"
    bad = {
        str(f.relative_to(ROOT)): sorted(_imported_roots(f) & FORBIDDEN[package])
        for f in files
        if _imported_roots(f) & FORBIDDEN[package]
    }
    assert not bad, f"{package} must not import {sorted(FORBIDDEN[package])}: {bad}"


def test_the_checker_sees_a_violation(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    import trio\n    from hmb_client import cli\n")
    assert {"trio", "hmb_client"} <= _imported_roots(bad)


def test_importing_kproto_loads_no_forbidden_module() -> None:
    code = (
        "import sys, kproto, kproto.records\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in {'trio', 'hmb', 'hmb_client'})\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
