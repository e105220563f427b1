"""Security tests: ``async def`` tests run in their own ``trio.run``, bounded in time.

The engines (SASL, SCRAM, ACLs) are tested without I/O; the TLS and SASL
listeners with the broker in the test's trio run on 127.0.0.1 sockets.
"""

from __future__ import annotations

import inspect

import pytest
import trio

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

    trio.run(main)
    return True
