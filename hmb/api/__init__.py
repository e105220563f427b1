"""The API layer: decode, version-gate, dispatch, answer; one module per API key.

Each handler module registers itself with :func:`hmb.api.registry.handles`;
:data:`HANDLERS` lists every key from the handler index written from those
declarations, and imports a handler's module when its key is first spoken
(:mod:`hmb.api.registry` has the rules).  Nobody keeps a second list.
"""

from __future__ import annotations

from hmb.api.registry import HANDLERS, Handler

__all__ = ["HANDLERS", "Handler"]
