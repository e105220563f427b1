"""In-process API tests: ``async def`` tests run in ``trio.run`` over a temporary broker.

pytest-trio is not a dependency: the hook below runs every coroutine test
function of this folder in its own ``trio.run``, bounded by
:data:`TEST_TIMEOUT_S` so that a request that never answers fails the test
instead of hanging the suite.  A test that asks for ``virtual_clock`` runs
on trio's autojumping mock clock: its timeouts (sessions, rebalances) pass in
no real time, measured exactly.  Only for tests that wait on nothing but
timers: the clock also jumps while a worker thread (file I/O) runs.
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import trio
from trio.testing import MockClock

from .harness import InProcessBroker

TEST_TIMEOUT_S = 60


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    fn = pyfuncitem.obj
    if not inspect.iscoroutinefunction(fn):
        return None
    kwargs = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}

    async def main() -> None:
        with trio.fail_after(TEST_TIMEOUT_S):
            await fn(**kwargs)

    trio.run(functools.partial(main), clock=pyfuncitem.funcargs.get("virtual_clock"))
    return True


@pytest.fixture
def virtual_clock() -> MockClock:
    """Virtual time for this test: trio's clock jumps to the next timer whenever every task waits."""
    return MockClock(autojump_threshold=0)


@pytest.fixture
def make_broker(tmp_path: Path) -> Iterator[Callable[..., InProcessBroker]]:
    """A factory for brokers with settings: ``make_broker("num.partitions=3")``."""
    made: list[InProcessBroker] = []

    def factory(*overrides: str, data_dir: Path | None = None) -> InProcessBroker:
        b = InProcessBroker(data_dir or tmp_path / f"data{len(made)}", *overrides)
        made.append(b)
        return b

    yield factory
    for b in made:
        b.close()


@pytest.fixture
def broker(make_broker: Callable[..., InProcessBroker]) -> InProcessBroker:
    """A broker with default settings over a fresh log."""
    return make_broker()


@pytest.fixture
def group_broker(make_broker: Callable[..., InProcessBroker]) -> InProcessBroker:
    """A broker for group tests: session timeouts down to 100 ms, two partitions per topic."""
    return make_broker("group.min.session.timeout.ms=100", "num.partitions=2")


@pytest.fixture
def group(request: pytest.FixtureRequest) -> str:
    """A group id of this test's own (also usable in topic names)."""
    return "g-" + re.sub(r"[^a-zA-Z0-9._-]", "_", request.node.name)
