"""CRC-32C (Castagnoli), the checksum of RecordBatch v2, from the ``crc32c`` package's extension.

The package's ``__init__`` looks up its own version through
``importlib.metadata``, which costs more than the rest of the record codecs'
import together (15-45 ms, a tenth of a broker's start-up).  The function
lives in the package's extension module, which needs none of that: it is
loaded directly, and through the package only when it is already imported
or its layout is not the one expected.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _load() -> Callable[..., int]:
    if "crc32c" in sys.modules:
        return sys.modules["crc32c"].crc32c
    spec = importlib.util.find_spec("crc32c")  # finds the package without running it
    for location in (spec.submodule_search_locations or []) if spec else []:
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = Path(location) / f"_crc32c{suffix}"
            if path.exists():
                ext = importlib.util.spec_from_file_location("crc32c._crc32c", path)
                if ext is not None and ext.loader is not None:
                    module: Any = importlib.util.module_from_spec(ext)
                    ext.loader.exec_module(module)
                    return module.crc32c
    from crc32c import crc32c as through_package

    return through_package


crc32c = _load()
