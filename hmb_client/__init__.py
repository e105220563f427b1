"""hmb_client: the client library (producer, consumer, admin) and the ``hmb`` tools.

The public classes are importable from here::

    from hmb_client import Admin, Consumer, Producer, TopicPartition

Rule of this module: it imports nothing at import time.  Each public name
is loaded on first use (a module ``__getattr__``), so ``import hmb_client``
-- which every ``hmb`` command pays before its ``--help`` -- stays instant
while the client modules, trio and kproto are loaded only by code that uses
them.  Errors are in :mod:`hmb_client.errors` (``from hmb_client import
errors``).
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (type checkers know it)

if TYPE_CHECKING:
    from hmb_client.admin import Admin
    from hmb_client.admin_types import AlterConfigOp, AlterConfigOpType, ConfigResource, NewTopic, OffsetSpec
    from hmb_client.consumer import Consumer, ConsumerRebalanceListener
    from hmb_client.errors import KafkaError
    from hmb_client.producer import FutureRecordMetadata, Producer, RecordMetadata
    from hmb_client.structs import ConsumerRecord, OffsetAndMetadata, OffsetAndTimestamp, TopicPartition

__version__ = "0.1.0"

#: public name -> the module defining it
_PUBLIC = {
    "Admin": "hmb_client.admin",
    "AlterConfigOp": "hmb_client.admin_types",
    "AlterConfigOpType": "hmb_client.admin_types",
    "ConfigResource": "hmb_client.admin_types",
    "NewTopic": "hmb_client.admin_types",
    "OffsetSpec": "hmb_client.admin_types",
    "Consumer": "hmb_client.consumer",
    "ConsumerRebalanceListener": "hmb_client.consumer",
    "ConsumerRecord": "hmb_client.structs",
    "FutureRecordMetadata": "hmb_client.producer",
    "KafkaError": "hmb_client.errors",
    "OffsetAndMetadata": "hmb_client.structs",
    "OffsetAndTimestamp": "hmb_client.structs",
    "Producer": "hmb_client.producer",
    "RecordMetadata": "hmb_client.producer",
    "TopicPartition": "hmb_client.structs",
}

__all__ = [
    "Admin",
    "AlterConfigOp",
    "AlterConfigOpType",
    "ConfigResource",
    "Consumer",
    "ConsumerRebalanceListener",
    "ConsumerRecord",
    "FutureRecordMetadata",
    "KafkaError",
    "NewTopic",
    "OffsetAndMetadata",
    "OffsetAndTimestamp",
    "OffsetSpec",
    "Producer",
    "RecordMetadata",
    "TopicPartition",
    "__version__",
]


def __getattr__(name: str) -> object:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'hmb_client' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # once loaded, an ordinary attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_PUBLIC})
