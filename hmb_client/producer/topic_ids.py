"""Produce v13 names topics by id (KIP-516): the producer sends it only when it knows every id.

Rules of this module:

* A Produce request goes as v13 when the leader offers it and the last
  metadata (Metadata v10+) gave the id of every topic in the request; one
  id unknown (all zeros: an older broker, or the topic not looked up yet)
  and the request goes as v12, by name, as the consumer's OffsetCommit and
  OffsetFetch fall back to v9 (``hmb_client.request_bodies.offsets_version``).
* Falling back never changes the transaction protocol: v12 and v13 are both
  transaction version 2 (KIP-890 part 2: the broker adds the partition of a
  transactional batch itself), and a producer on the first protocol stops
  at v11 before it gets here (``hmb_client.producer.transactions``).
* The answer names topics by the ids the request gave; they are mapped back
  to the request's names, so the rest of the producer only knows names.  An
  id the broker no longer knows (the topic deleted, maybe made again) is
  answered UNKNOWN_TOPIC_ID, which the producer treats as stale metadata.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import partial

from hmb_client.cluster import NO_TOPIC_ID, TopicInfo
from kproto.produce_fast import FIRST_TOPIC_ID, PartitionAck, produce_acks


def produce_version(
    version: int, topics: Mapping[str, TopicInfo], names: Iterable[str]
) -> tuple[int, dict[str, bytes] | None]:
    """The Produce version to send for a request naming ``names``, given ``version``
    (the newest both sides speak) and the cached metadata ``topics``; with v13+ the
    id of each name, else None (v12 when v13 would need an id the metadata lacks)."""
    if version < FIRST_TOPIC_ID:
        return version, None
    ids: dict[str, bytes] = {}
    for name in names:
        info = topics.get(name)
        if info is None or info.topic_id == NO_TOPIC_ID:
            return FIRST_TOPIC_ID - 1, None
        ids[name] = info.topic_id
    return version, ids


def acks_decoder(version: int, ids: Mapping[str, bytes] | None) -> Callable[[bytes], list[PartitionAck]]:
    """The decoder of the answer to a request of ``version``: each partition's ack under
    its topic's name (from v13 named by the ids ``ids`` gave the request; an id the
    request did not send is named "", finds no batch and so answers none)."""
    names = None if ids is None else {topic_id: name for name, topic_id in ids.items()}
    return partial(produce_acks, version, names=names)
