"""The producer: :class:`Producer` and what it is made of.

* :mod:`.producer`: ``send()`` in the caller's thread and the sender in the I/O thread;
* :mod:`.config`: :class:`ProducerConfig`, the settings (kafka-python names);
* :mod:`.batches`: the per-partition record batches, their encoding and futures;
* :mod:`.idempotence`: producer id and sequence bookkeeping of the idempotent producer;
* :mod:`.partitioner`: which partition a record goes to.

Rule of this package: :mod:`.producer` owns the I/O thread and the sending;
the others are data and bookkeeping it calls (:mod:`.idempotence` asks for a
producer id on a connection the sender hands it).  Users import from here.
"""

from hmb_client.producer.batches import FutureRecordMetadata, RecordMetadata
from hmb_client.producer.config import ProducerConfig
from hmb_client.producer.producer import Producer

__all__ = ["FutureRecordMetadata", "Producer", "ProducerConfig", "RecordMetadata"]
