"""The topics a consumer-group member subscribes to, read from its JoinGroup metadata.

Members of a group of protocol type ``consumer`` send Kafka's
ConsumerProtocolSubscription as their protocol metadata:

    version int16, topics [string] (int32 count, int16-length strings), user_data bytes, ...

Only the topics are needed by the broker (OffsetDelete refuses a topic an
active member subscribes to), so only the fields up to them are read; the
later fields of newer versions follow them and are ignored.  Bytes that are
not this format (another protocol type, a truncated or garbled metadata)
subscribe to nothing, as Kafka treats a group whose subscriptions it cannot
read.
"""

from __future__ import annotations

import struct

CONSUMER_PROTOCOL_TYPE = "consumer"

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")


class SubscriptionFormatError(ValueError):
    """Metadata bytes that are not a consumer protocol subscription."""


def subscribed_topics(metadata: bytes) -> list[str]:
    """The topics of one member's subscription (SubscriptionFormatError if unreadable)."""
    try:
        (version,) = _I16.unpack_from(metadata, 0)
        (count,) = _I32.unpack_from(metadata, 2)
    except struct.error:
        raise SubscriptionFormatError("truncated subscription header") from None
    if version < 0 or count < 0 or count > len(metadata):
        raise SubscriptionFormatError(f"subscription version {version} with {count} topics")
    pos, topics = 6, []
    for _ in range(count):
        try:
            (length,) = _I16.unpack_from(metadata, pos)
        except struct.error:
            raise SubscriptionFormatError(f"truncated subscription at byte {pos}") from None
        end = pos + 2 + length
        if length < 0 or end > len(metadata):
            raise SubscriptionFormatError(f"bad topic name length {length} at byte {pos}")
        try:
            topics.append(metadata[pos + 2 : end].decode())
        except UnicodeDecodeError:
            raise SubscriptionFormatError(f"topic name at byte {pos} is not UTF-8") from None
        pos = end
    return topics
