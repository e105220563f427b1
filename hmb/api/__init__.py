"""The API layer: decode, version-gate, dispatch, answer; one module per API key.

Each handler module registers itself with :func:`hmb.api.registry.handles`;
importing this package imports every module in it, so :data:`HANDLERS` is
complete once ``hmb.api`` is imported and nobody keeps a second list.
"""

from __future__ import annotations

import importlib
import pkgutil

from hmb.api.registry import HANDLERS, Handler

for _info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    importlib.import_module(f"{__name__}.{_info.name}")

__all__ = ["HANDLERS", "Handler"]
