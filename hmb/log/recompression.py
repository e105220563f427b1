"""compression.type: the codec a topic stores its record batches with.

``producer`` (the default) keeps each batch as the producer compressed it.
``uncompressed`` or a codec makes the log recompress every record batch whose
codec differs before it is written, as Kafka's broker does; offsets,
timestamps and producer fields stay as they are (see
:mod:`kproto.records.recompress`).  Rules:

* The work (decompress, compress, checksum) runs in a worker thread, never
  on the event loop; the partition's appends wait for it, as they wait in
  Kafka behind its log lock.  A batch already in the topic's codec costs one
  header read.
* A recompressed batch larger than ``max.message.bytes`` refuses the append
  (:class:`kproto.records.RecordTooLargeError`), as Kafka does.
* MessageSets (magic 0/1) are stored as they came.
"""

from __future__ import annotations

import trio

from kproto.records import Compression, RecordTooLargeError
from kproto.records.entry import entry_size
from kproto.records.recompress import batches_to_recompress, recompress_batches

KEEP_PRODUCER_CODEC = "producer"
#: compression.type -> the codec batches are stored with (``producer``: absent, keep the batch's)
STORED_CODECS = {
    "uncompressed": Compression.NONE,
    "gzip": Compression.GZIP,
    "snappy": Compression.SNAPPY,
    "lz4": Compression.LZ4,
    "zstd": Compression.ZSTD,
}


async def stored_form(
    records: bytes | bytearray, compression_type: str, max_message_bytes: int
) -> bytes | bytearray:
    """``records`` as the topic stores them: recompressed where the topic's codec differs."""
    codec = STORED_CODECS.get(compression_type)
    if codec is None or not batches_to_recompress(records, codec):
        return records
    return await trio.to_thread.run_sync(_recompress, records, int(codec), max_message_bytes)


def _recompress(records: bytes | bytearray, codec: int, max_message_bytes: int) -> bytes:
    out = recompress_batches(records, codec)
    pos = 0
    while pos < len(out):
        size = entry_size(out, pos)
        if size > max_message_bytes:
            raise RecordTooLargeError(size, max_message_bytes)
        pos += max(size, 1)
    return out
