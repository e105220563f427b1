"""The consumer: :class:`Consumer` and the parts it is composed of.

* :mod:`.consumer`: the :class:`Consumer` (the caller's side) composing the parts;
* :mod:`.config`: :class:`ConsumerConfig`, every setting (kafka-python names);
* :mod:`.partitions`: the assigned partitions and their buffers, shared by both threads;
* :mod:`.fetcher`: Fetch requests and positions (the I/O thread);
* :mod:`.fetch_records`: one partition's record set, whatever its message format;
* :mod:`.list_offsets`: offsets by time (ListOffsets);
* :mod:`.offsets`: the group's committed offsets (OffsetFetch, OffsetCommit, auto-commit);
* :mod:`.membership`: ``subscribe()``, rebalances and the listener, on the consumer's side;
* :mod:`.group`: the group protocol (JoinGroup, SyncGroup, Heartbeat, LeaveGroup);
* :mod:`.coordinator`: the connection to the group's coordinator, found on demand.

Rule of this package: the parts do not inherit from each other or from the
consumer; each gets, when built, only what it uses (the config, the partition
table, the cluster, and callables such as ``spawn``).  Users import from here.
"""

from hmb_client.consumer.config import ConsumerConfig
from hmb_client.consumer.consumer import Consumer
from hmb_client.consumer.fetcher import OffsetOutOfRangeError
from hmb_client.consumer.group import ConsumerRebalanceListener
from hmb_client.consumer.offsets import CommitCallback

__all__ = [
    "CommitCallback",
    "Consumer",
    "ConsumerConfig",
    "ConsumerRebalanceListener",
    "OffsetOutOfRangeError",
]
