"""hmb: the broker, layered network -> api -> log on trio.

It speaks the Kafka wire protocol through :mod:`kproto` and never imports
:mod:`hmb_client` (a test enforces the direction).

``hmb.Broker`` is the broker to embed in a test process
(:class:`hmb.embedded.EmbeddedBroker`); it is imported on first use, so
``import hmb`` stays cheap for the command line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hmb.embedded import EmbeddedBroker as Broker

__version__ = "0.1.0"
__all__ = ["Broker", "__version__"]


def __getattr__(name: str) -> Any:
    if name == "Broker":
        from hmb.embedded import EmbeddedBroker

        return EmbeddedBroker
    raise AttributeError(f"module 'hmb' has no attribute {name!r}")
