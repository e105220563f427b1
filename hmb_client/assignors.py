"""Partition assignors and Kafka's consumer-protocol encoding.

A consumer group's coordinator knows nothing about topics: every member
joins with opaque *subscription* bytes per assignor it supports, one member
(the leader) decodes them all, computes the assignment and sends each
member opaque *assignment* bytes back through SyncGroup.  For hmb_client
consumers to share a group with Java, kafka-python and librdkafka
consumers, both the bytes and the assignor arithmetic must be Kafka's own:

* Encoding: ``ConsumerProtocolSubscription`` / ``ConsumerProtocolAssignment``
  (apache/kafka ``clients/src/main/resources/common/message``), int16
  version first, no flexible versions::

    Subscription => version:int16 topics:[string] user_data:nullable_bytes
                    owned_partitions:[topic:string partitions:[int32]]   (v1+)
                    generation_id:int32                                 (v2+)
                    rack_id:nullable_string                             (v3+)
    Assignment   => version:int16 assigned_partitions:[topic:string partitions:[int32]]
                    user_data:nullable_bytes                            (all versions)

  Like Kafka, a reader meeting a version newer than it knows parses the
  fields it knows and ignores what follows (new versions only append), and
  a version below 0 is an error.
* Assignors: ``range`` and ``roundrobin`` with the Java client's exact
  semantics (``RangeAssignor``/``RoundRobinAssignor``, eager protocol):
  members ordered static-first by ``group.instance.id``, then by member id,
  strings compared as Java compares them (UTF-16 code units); topics absent
  from the metadata are skipped.  Rack-aware range assignment (KIP-881)
  needs subscription v3 rack ids and replica racks, which this client does
  not send or know, so it is the plain range algorithm here -- what Java
  does too when racks are absent.

The default strategy list is ``("range", "roundrobin")``: the default of
both kafka-python and librdkafka, so a group mixing them with hmb_client
agrees on ``range`` without configuration.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from hmb_client.structs import TopicPartition

__all__ = [
    "DEFAULT_ASSIGNORS",
    "Assignment",
    "ConsumerProtocolError",
    "PartitionAssignor",
    "RangeAssignor",
    "RoundRobinAssignor",
    "Subscription",
    "assignors_for",
    "decode_assignment",
    "decode_subscription",
    "encode_assignment",
    "encode_subscription",
]

PROTOCOL_TYPE = "consumer"  # JoinGroup protocol_type shared by every Kafka consumer
LATEST_VERSION = 3  # newest ConsumerProtocol version whose fields are known here

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")


class ConsumerProtocolError(ValueError):
    """Subscription or assignment bytes that are not Kafka's consumer protocol."""


@dataclass
class Subscription:
    """A member's ConsumerProtocolSubscription (plus, as in Java, its group instance id,
    which travels in JoinGroup rather than in these bytes)."""

    topics: list[str]
    user_data: bytes | None = None
    owned_partitions: list[TopicPartition] = field(default_factory=list)  # v1+
    generation_id: int = -1  # v2+
    rack_id: str | None = None  # v3+
    version: int = 1
    group_instance_id: str | None = None


@dataclass
class Assignment:
    """A member's ConsumerProtocolAssignment."""

    partitions: list[TopicPartition]
    user_data: bytes | None = None
    version: int = 0


# ---------------------------------------------------------------- encoding


def _string(s: str) -> bytes:
    raw = s.encode()
    return _I16.pack(len(raw)) + raw


def _nullable_string(s: str | None) -> bytes:
    return _I16.pack(-1) if s is None else _string(s)


def _nullable_bytes(b: bytes | None) -> bytes:
    return _I32.pack(-1) if b is None else _I32.pack(len(b)) + bytes(b)


def _topic_partitions(tps: Iterable[TopicPartition]) -> bytes:
    """``[topic partitions:[int32]]`` grouped by topic in first-seen order, partitions as given."""
    by_topic: dict[str, list[int]] = {}
    for tp in tps:
        by_topic.setdefault(tp[0], []).append(tp[1])
    out = [_I32.pack(len(by_topic))]
    for topic, parts in by_topic.items():
        out += [_string(topic), _I32.pack(len(parts)), b"".join(_I32.pack(p) for p in parts)]
    return b"".join(out)


def encode_subscription(sub: Subscription) -> bytes:
    """The subscription bytes of ``sub.version`` (0-3)."""
    if not 0 <= sub.version <= LATEST_VERSION:
        raise ValueError(f"cannot encode consumer protocol subscription v{sub.version}")
    out = [_I16.pack(sub.version), _I32.pack(len(sub.topics))]
    out += [_string(t) for t in sub.topics]
    out.append(_nullable_bytes(sub.user_data))
    if sub.version >= 1:
        out.append(_topic_partitions(sub.owned_partitions))
    if sub.version >= 2:
        out.append(_I32.pack(sub.generation_id))
    if sub.version >= 3:
        out.append(_nullable_string(sub.rack_id))
    return b"".join(out)


def encode_assignment(assignment: Assignment) -> bytes:
    """The assignment bytes (one layout for versions 0-3; only the version number differs)."""
    if not 0 <= assignment.version <= LATEST_VERSION:
        raise ValueError(f"cannot encode consumer protocol assignment v{assignment.version}")
    return b"".join(
        (
            _I16.pack(assignment.version),
            _topic_partitions(assignment.partitions),
            _nullable_bytes(assignment.user_data),
        )
    )


class _Reader:
    """Reads Kafka primitives; running out of bytes is a ConsumerProtocolError."""

    def __init__(self, data: bytes, what: str) -> None:
        self.data = memoryview(bytes(data))
        self.pos = 0
        self.what = what

    def _take(self, n: int) -> memoryview:
        if n < 0 or self.pos + n > len(self.data):
            raise ConsumerProtocolError(f"truncated {self.what} at byte {self.pos}")
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    @property
    def at_end(self) -> bool:
        return self.pos >= len(self.data)

    def int16(self) -> int:
        return int(_I16.unpack(self._take(2))[0])

    def int32(self) -> int:
        return int(_I32.unpack(self._take(4))[0])

    def nullable_string(self) -> str | None:
        n = self.int16()
        if n < 0:
            return None
        try:
            return bytes(self._take(n)).decode()
        except UnicodeDecodeError as exc:
            raise ConsumerProtocolError(f"bad string in {self.what}: {exc}") from None

    def string(self) -> str:
        s = self.nullable_string()
        if s is None:
            raise ConsumerProtocolError(f"null string in {self.what} at byte {self.pos}")
        return s

    def nullable_bytes(self) -> bytes | None:
        n = self.int32()
        return None if n < 0 else bytes(self._take(n))

    def count(self) -> int:
        n = self.int32()
        if n < 0:  # a null array where Kafka never writes one: read it as empty
            return 0
        if n > len(self.data) - self.pos:  # every element takes at least one byte
            raise ConsumerProtocolError(f"array of {n} elements in a {len(self.data)}-byte {self.what}")
        return n

    def topic_partitions(self) -> list[TopicPartition]:
        out = []
        for _ in range(self.count()):
            topic = self.string()
            out += [TopicPartition(topic, self.int32()) for _ in range(self.count())]
        return out

    def version(self) -> int:
        version = self.int16()
        if version < 0:
            raise ConsumerProtocolError(f"{self.what} version {version} is negative")
        return version


def decode_subscription(data: bytes) -> Subscription:
    """Parse subscription bytes of any version (newer than 3: the known fields only)."""
    r = _Reader(data, "consumer protocol subscription")
    version = r.version()
    topics = [r.string() for _ in range(r.count())]
    sub = Subscription(topics, r.nullable_bytes(), version=version)
    # Fields of v1+ are "ignorable" in Kafka's spec: an old writer that claimed a
    # newer version without them is read leniently rather than rejected.
    if version >= 1 and not r.at_end:
        sub.owned_partitions = r.topic_partitions()
    if version >= 2 and not r.at_end:
        sub.generation_id = r.int32()
    if version >= 3 and not r.at_end:
        sub.rack_id = r.nullable_string()
    return sub


def decode_assignment(data: bytes) -> Assignment:
    """Parse assignment bytes of any version; empty bytes mean an empty assignment (as in Java)."""
    if not data:
        return Assignment([])
    r = _Reader(data, "consumer protocol assignment")
    version = r.version()
    partitions = r.topic_partitions()
    user_data = None if r.at_end else r.nullable_bytes()
    return Assignment(partitions, user_data, version)


# ---------------------------------------------------------------- assignors


def _java_order(s: str) -> bytes:
    """Sort key ordering strings as Java's ``String.compareTo`` does (by UTF-16 code unit)."""
    return s.encode("utf-16-be", "surrogatepass")


def _member_order(member_id: str, sub: Subscription) -> tuple[int, bytes, bytes]:
    """Java's ``MemberInfo.compareTo``: static members first, by instance id; then by member id."""
    if sub.group_instance_id is not None:
        return (0, _java_order(sub.group_instance_id), _java_order(member_id))
    return (1, b"", _java_order(member_id))


class PartitionAssignor:
    """An eager assignor: a name (the JoinGroup protocol name) and an assignment function.

    Subclass and override :meth:`assign` (and :meth:`subscription` /
    :meth:`on_assignment` when it carries user data) to plug in your own.
    """

    name = ""

    def subscription(self, topics: Sequence[str], owned: Sequence[TopicPartition] = ()) -> Subscription:
        """The subscription this member joins with."""
        return Subscription(sorted(set(topics)), None, list(owned))

    def assign(
        self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription]
    ) -> dict[str, list[TopicPartition]]:
        """member id -> partitions, for every member (possibly empty lists)."""
        raise NotImplementedError

    def on_assignment(self, assignment: Assignment, generation: int) -> None:
        """Called with this member's assignment of each generation (state for sticky assignors)."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


class RangeAssignor(PartitionAssignor):
    """Per topic: partitions in order, members sorted, contiguous ranges, the first
    ``partitions % members`` members one partition more."""

    name = "range"

    def assign(
        self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription]
    ) -> dict[str, list[TopicPartition]]:
        assignment: dict[str, list[TopicPartition]] = {m: [] for m in subscriptions}
        members_of: dict[str, list[str]] = {}
        for member, sub in subscriptions.items():
            for topic in dict.fromkeys(sub.topics):
                members_of.setdefault(topic, []).append(member)
        for topic in sorted(members_of, key=_java_order):
            count = partitions_per_topic.get(topic, 0)
            if count <= 0:
                continue
            members = sorted(members_of[topic], key=lambda m: _member_order(m, subscriptions[m]))
            per_member, extra = divmod(count, len(members))
            for i, member in enumerate(members):
                start = per_member * i + min(i, extra)
                length = per_member + (1 if i < extra else 0)
                assignment[member] += [TopicPartition(topic, p) for p in range(start, start + length)]
        return assignment


class RoundRobinAssignor(PartitionAssignor):
    """All partitions sorted by (topic, partition) dealt to the sorted members in a circle,
    skipping members not subscribed to the partition's topic."""

    name = "roundrobin"

    def assign(
        self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription]
    ) -> dict[str, list[TopicPartition]]:
        assignment: dict[str, list[TopicPartition]] = {m: [] for m in subscriptions}
        members = sorted(subscriptions, key=lambda m: _member_order(m, subscriptions[m]))
        if not members:
            return assignment
        topics_of = {m: set(subscriptions[m].topics) for m in members}
        all_topics = sorted({t for topics in topics_of.values() for t in topics}, key=_java_order)
        i = 0
        for topic in all_topics:
            for partition in range(max(0, partitions_per_topic.get(topic, 0))):
                while topic not in topics_of[members[i]]:  # some member has the topic: this ends
                    i = (i + 1) % len(members)
                assignment[members[i]].append(TopicPartition(topic, partition))
                i = (i + 1) % len(members)
        return assignment


_BUILTIN: dict[str, type[PartitionAssignor]] = {"range": RangeAssignor, "roundrobin": RoundRobinAssignor}
DEFAULT_ASSIGNORS: tuple[str, ...] = ("range", "roundrobin")

AssignorSpec = str | PartitionAssignor | type[PartitionAssignor]


def assignors_for(specs: Iterable[AssignorSpec]) -> list[PartitionAssignor]:
    """Assignor instances for ``partition_assignment_strategy`` entries.

    Entries are names (``"range"``, ``"roundrobin"``), :class:`PartitionAssignor`
    subclasses or instances; order is preference order, as in JoinGroup.
    """
    out: list[PartitionAssignor] = []
    for spec in specs:
        if isinstance(spec, str):
            cls = _BUILTIN.get(spec.lower())
            if cls is None:
                raise ValueError(f"unknown partition assignor {spec!r}: use one of {sorted(_BUILTIN)}")
            out.append(cls())
        elif isinstance(spec, type) and issubclass(spec, PartitionAssignor):
            out.append(spec())
        elif isinstance(spec, PartitionAssignor):
            out.append(spec)
        else:
            raise TypeError(f"not a partition assignor: {spec!r}")
        if not out[-1].name:
            raise ValueError(f"partition assignor {spec!r} has no name")
    if not out:
        raise ValueError("partition_assignment_strategy is empty")
    if len({a.name for a in out}) != len(out):
        raise ValueError("partition_assignment_strategy names an assignor twice")
    return out
