"""The layers' import rules, enforced.

The project is layered so that each part can be read, tested and replaced
alone (docs/architecture.md draws the picture):

* ``kproto`` is a codec: it imports nothing of ours and no I/O library.
* ``hmb.log`` knows records and files: nothing of the API, network, group
  or broker layers, and no Kafka error codes (it raises its own exceptions;
  the API layer maps them).
* ``hmb.net`` moves frames: of the log it sees only the file-region type
  that responses are made of, and it never reaches the broker object.
* ``hmb.txn`` (the transaction coordinator) sits beside ``hmb.groups``:
  called by the API layer, it never imports it, the network or the broker.
* ``hmb.api`` decodes and dispatches: it never imports the network layer
  or the broker, which wire it up from above.
* ``hmb.cluster`` (membership, controller, placement on ZooKeeper) knows
  the log and the settings but no request, error code or connection; kazoo,
  ZooKeeper's client, is used there only, so the API layer reads the
  cluster's view and never ZooKeeper.
* ``hmb.security`` (principals, SASL mechanisms, credentials, ACLs) does no
  I/O and knows no request: the API and network layers call it.
* ``hmb`` never imports ``hmb_client``, and ``hmb_client`` never imports
  ``hmb``: a client library that talks to any Kafka-compatible broker.  The
  ``hmb`` command (``hmb_cmd``) is the one place that uses both.

Checked twice: statically over every module's import statements (catching
an import hidden in a function body or made with ``importlib``), and for
kproto by importing it in a fresh interpreter and looking at what got loaded.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Rule:
    where: str  # a package or module path, e.g. "hmb/log"
    forbidden: tuple[str, ...]  # dotted prefixes that may not be imported there
    allowed: tuple[str, ...] = ()  # exceptions to ``forbidden``

    def violations(self, imported: set[str]) -> list[str]:
        def matches(name: str, prefix: str) -> bool:
            return name == prefix or name.startswith(prefix + ".")

        def forbidden(name: str) -> bool:
            return any(matches(name, f) for f in self.forbidden) and not any(
                matches(name, a) for a in self.allowed
            )

        return sorted(filter(forbidden, imported))


RULES = (
    Rule("kproto", ("trio", "hmb", "hmb_client", "socket", "asyncio")),
    Rule("hmb", ("hmb_client",)),
    Rule("hmb_client", ("hmb",)),
    Rule(
        "hmb/log",
        (
            "hmb.api",
            "hmb.net",
            "hmb.groups",
            "hmb.txn",
            "hmb.broker",
            "hmb.cli",
            "hmb.cluster",
            "kazoo",
            "kproto.ErrorCode",
            "kproto.error_codes",
        ),
    ),
    Rule(
        "hmb/net", ("hmb.log", "hmb.broker", "hmb.groups", "hmb.txn", "hmb.cli"), allowed=("hmb.log.region",)
    ),
    Rule("hmb/api", ("hmb.net", "hmb.broker", "hmb.cli", "kazoo")),
    # the transaction coordinator: called by the API layer, calls the log and the committed offsets
    Rule("hmb/txn", ("hmb.api", "hmb.net", "hmb.broker", "hmb.cli")),
    # the cluster on ZooKeeper: below the API, above the log; the one user of kazoo
    Rule("hmb/cluster", ("hmb.api", "hmb.net", "hmb.broker", "hmb.cli", "hmb.groups", "kproto")),
    # requests between brokers: the cluster's view in, the Kafka protocol out; no ZooKeeper
    Rule("hmb/interbroker", ("hmb.api", "hmb.net", "hmb.broker", "hmb.cli", "hmb.groups", "kazoo")),
    # replication: the local replicas' roles; ZooKeeper only through hmb.cluster's session
    Rule("hmb/replication", ("hmb.api", "hmb.net", "hmb.broker", "hmb.cli", "hmb.groups", "hmb.txn")),
    # principals, SASL mechanisms, credentials and ACLs: sans-I/O, below the API and network layers
    Rule(
        "hmb/security",
        (
            "trio",
            "socket",
            "ssl",
            "hmb.api",
            "hmb.net",
            "hmb.log",
            "hmb.groups",
            "hmb.txn",
            "hmb.broker",
            "hmb.cli",
        ),
    ),
)


def imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports, dotted, wherever the import statement stands."""
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "import_module":
            if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                names.add(node.args[0].value)
    return names


def _files(where: str) -> list[Path]:
    path = ROOT / where
    return [path.with_suffix(".py")] if path.with_suffix(".py").is_file() else sorted(path.rglob("*.py"))


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.where)
def test_no_forbidden_imports_in_source(rule: Rule) -> None:
    files = _files(rule.where)
    assert files, f"no modules found in {rule.where}"
    bad = {str(f.relative_to(ROOT)): found for f in files if (found := rule.violations(imported_modules(f)))}
    allowed = f" (except {list(rule.allowed)})" if rule.allowed else ""
    assert not bad, f"{rule.where} must not import {list(rule.forbidden)}{allowed}: {bad}"


def test_the_checker_sees_a_violation(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import importlib\n"
        "def f():\n    import trio\n    from hmb_client import cli\n"
        "    importlib.import_module('hmb.cli')\n"
    )
    found = imported_modules(bad)
    assert {"trio", "hmb_client.cli", "hmb.cli"} <= found
    assert Rule("x", ("hmb",)).violations(found) == ["hmb.cli"]
    assert Rule("x", ("hmb_client",), allowed=("hmb_client",)).violations(found) == []


def test_importing_kproto_loads_no_forbidden_module() -> None:
    code = (
        "import sys, kproto, kproto.records\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in {'trio', 'hmb', 'hmb_client'})\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
