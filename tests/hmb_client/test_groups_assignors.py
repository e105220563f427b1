"""The assignors against the Java client's known outcomes, and the consumer-protocol
bytes against kafka-python's (``kafka.protocol.consumer.metadata``).

The expected assignments are those asserted by apache/kafka's
``RangeAssignorTest`` and ``RoundRobinAssignorTest`` (clients module); the
random cases compare with kafka-python's assignors, which follow Java for
dynamic members.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hmb_client.assignors import (
    Assignment,
    ConsumerProtocolError,
    PartitionAssignor,
    RangeAssignor,
    RoundRobinAssignor,
    Subscription,
    assignors_for,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
)
from hmb_client.structs import TopicPartition

kp_meta = pytest.importorskip("kafka.protocol.consumer.metadata")
KSub = kp_meta.ConsumerProtocolSubscription
KAssign = kp_meta.ConsumerProtocolAssignment

T1, T2 = "topic1", "topic2"


def tp(topic: str, partition: int) -> TopicPartition:
    return TopicPartition(topic, partition)


def sub(*topics: str, instance: str | None = None) -> Subscription:
    return Subscription(list(topics), group_instance_id=instance)


# ---------------------------------------------------------------- range (RangeAssignorTest)


RANGE_CASES: list[tuple[str, dict[str, int], dict[str, Subscription], dict[str, list[TopicPartition]]]] = [
    ("one consumer, no topic", {}, {"consumer1": sub()}, {"consumer1": []}),
    ("one consumer, nonexistent topic", {}, {"consumer1": sub(T1)}, {"consumer1": []}),
    (
        "one consumer, one topic",
        {T1: 3},
        {"consumer1": sub(T1)},
        {"consumer1": [tp(T1, 0), tp(T1, 1), tp(T1, 2)]},
    ),
    (
        "only subscribed topics",
        {T1: 3, "other": 3},
        {"consumer1": sub(T1)},
        {"consumer1": [tp(T1, 0), tp(T1, 1), tp(T1, 2)]},
    ),
    (
        "one consumer, two topics",
        {T1: 1, T2: 2},
        {"consumer1": sub(T1, T2)},
        {"consumer1": [tp(T1, 0), tp(T2, 0), tp(T2, 1)]},
    ),
    (
        "two consumers, one partition",
        {T1: 1},
        {"consumer1": sub(T1), "consumer2": sub(T1)},
        {"consumer1": [tp(T1, 0)], "consumer2": []},
    ),
    (
        "two consumers, two partitions",
        {T1: 2},
        {"consumer1": sub(T1), "consumer2": sub(T1)},
        {"consumer1": [tp(T1, 0)], "consumer2": [tp(T1, 1)]},
    ),
    (
        "mixed topics",
        {T1: 3, T2: 2},
        {"consumer1": sub(T1), "consumer2": sub(T1, T2), "consumer3": sub(T1)},
        {"consumer1": [tp(T1, 0)], "consumer2": [tp(T1, 1), tp(T2, 0), tp(T2, 1)], "consumer3": [tp(T1, 2)]},
    ),
    (
        "two consumers, two topics, six partitions",
        {T1: 3, T2: 3},
        {"consumer1": sub(T1, T2), "consumer2": sub(T1, T2)},
        {"consumer1": [tp(T1, 0), tp(T1, 1), tp(T2, 0), tp(T2, 1)], "consumer2": [tp(T1, 2), tp(T2, 2)]},
    ),
    (
        "static members compare by instance id",
        {T1: 3, T2: 3},
        {"consumer-b": sub(T1, T2, instance="instance1"), "consumer-a": sub(T1, T2, instance="instance2")},
        {"consumer-b": [tp(T1, 0), tp(T1, 1), tp(T2, 0), tp(T2, 1)], "consumer-a": [tp(T1, 2), tp(T2, 2)]},
    ),
    (
        "a static member before a dynamic one",
        {T1: 3, T2: 3},
        {"consumer-b": sub(T1, T2, instance="instance1"), "consumer-a": sub(T1, T2)},
        {"consumer-b": [tp(T1, 0), tp(T1, 1), tp(T2, 0), tp(T2, 1)], "consumer-a": [tp(T1, 2), tp(T2, 2)]},
    ),
    (
        "static assignment persistent",
        {T1: 5, T2: 4},
        {
            "consumer1": sub(T1, T2, instance="instance1"),
            "consumer2": sub(T1, T2, instance="instance2"),
            "consumer3": sub(T1, T2, instance="instance3"),
            "consumer4": sub(T1, T2),
        },
        {
            "consumer1": [tp(T1, 0), tp(T1, 1), tp(T2, 0)],
            "consumer2": [tp(T1, 2), tp(T2, 1)],
            "consumer3": [tp(T1, 3), tp(T2, 2)],
            "consumer4": [tp(T1, 4), tp(T2, 3)],
        },
    ),
    (
        "static assignment persistent, dynamic member replaced",
        {T1: 5, T2: 4},
        {
            "consumer1": sub(T1, T2, instance="instance1"),
            "consumer2": sub(T1, T2, instance="instance2"),
            "consumer3": sub(T1, T2, instance="instance3"),
            "consumer5": sub(T1, T2),
        },
        {
            "consumer1": [tp(T1, 0), tp(T1, 1), tp(T2, 0)],
            "consumer2": [tp(T1, 2), tp(T2, 1)],
            "consumer3": [tp(T1, 3), tp(T2, 2)],
            "consumer5": [tp(T1, 4), tp(T2, 3)],
        },
    ),
]


@pytest.mark.parametrize(
    ("partitions", "subs", "expected"), [c[1:] for c in RANGE_CASES], ids=[c[0] for c in RANGE_CASES]
)
def test_range_matches_java(
    partitions: dict[str, int], subs: dict[str, Subscription], expected: dict[str, list[TopicPartition]]
) -> None:
    assert RangeAssignor().assign(partitions, subs) == expected


def test_range_static_assignment_survives_member_id_changes() -> None:
    """RangeAssignorTest.testStaticMemberRangeAssignmentPersistentAfterMemberIdChanges."""
    parts = {T1: 5, T2: 5}
    before = {
        "consumer1": sub(T1, T2, instance="instance1"),
        "consumer2": sub(T1, T2, instance="instance2"),
        "consumer3": sub(T1, T2, instance="instance3"),
    }
    by_instance = {
        "instance1": [tp(T1, 0), tp(T1, 1), tp(T2, 0), tp(T2, 1)],
        "instance2": [tp(T1, 2), tp(T1, 3), tp(T2, 2), tp(T2, 3)],
        "instance3": [tp(T1, 4), tp(T2, 4)],
    }
    got = RangeAssignor().assign(parts, before)
    assert {before[m].group_instance_id: ps for m, ps in got.items()} == by_instance
    after = {
        "consumer1": before["consumer1"],
        "consumer5": before["consumer2"],
        "consumer4": before["consumer3"],
    }
    got = RangeAssignor().assign(parts, after)
    assert {after[m].group_instance_id: ps for m, ps in got.items()} == by_instance


# ---------------------------------------------------------------- roundrobin (RoundRobinAssignorTest)


ROUNDROBIN_CASES: list[
    tuple[str, dict[str, int], dict[str, Subscription], dict[str, list[TopicPartition]]]
] = [
    ("one consumer, no topic", {}, {"consumer": sub()}, {"consumer": []}),
    ("one consumer, nonexistent topic", {}, {"consumer": sub("topic")}, {"consumer": []}),
    (
        "one consumer, one topic",
        {"topic": 3},
        {"consumer": sub("topic")},
        {"consumer": [tp("topic", 0), tp("topic", 1), tp("topic", 2)]},
    ),
    (
        "only subscribed topics",
        {"topic": 3, "other": 3},
        {"consumer": sub("topic")},
        {"consumer": [tp("topic", 0), tp("topic", 1), tp("topic", 2)]},
    ),
    (
        "one consumer, two topics",
        {T1: 1, T2: 2},
        {"consumer": sub(T1, T2)},
        {"consumer": [tp(T1, 0), tp(T2, 0), tp(T2, 1)]},
    ),
    (
        "two consumers, one partition",
        {"topic": 1},
        {"consumer1": sub("topic"), "consumer2": sub("topic")},
        {"consumer1": [tp("topic", 0)], "consumer2": []},
    ),
    (
        "two consumers, two partitions",
        {"topic": 2},
        {"consumer1": sub("topic"), "consumer2": sub("topic")},
        {"consumer1": [tp("topic", 0)], "consumer2": [tp("topic", 1)]},
    ),
    (
        "mixed topics",
        {T1: 3, T2: 2},
        {"consumer1": sub(T1), "consumer2": sub(T1, T2), "consumer3": sub(T1)},
        {"consumer1": [tp(T1, 0)], "consumer2": [tp(T1, 1), tp(T2, 0), tp(T2, 1)], "consumer3": [tp(T1, 2)]},
    ),
    (
        "two dynamic consumers, two topics, six partitions",
        {T1: 3, T2: 3},
        {"consumer1": sub(T1, T2), "consumer2": sub(T1, T2)},
        {"consumer1": [tp(T1, 0), tp(T1, 2), tp(T2, 1)], "consumer2": [tp(T1, 1), tp(T2, 0), tp(T2, 2)]},
    ),
    (
        "static members compare by instance id",
        {T1: 3, T2: 3},
        {"consumer-b": sub(T1, T2, instance="instance1"), "consumer-a": sub(T1, T2, instance="instance2")},
        {"consumer-b": [tp(T1, 0), tp(T1, 2), tp(T2, 1)], "consumer-a": [tp(T1, 1), tp(T2, 0), tp(T2, 2)]},
    ),
    (
        "a static member before a dynamic one",
        {T1: 3, T2: 3},
        {"consumer-b": sub(T1, T2, instance="instance1"), "consumer-a": sub(T1, T2)},
        {"consumer-b": [tp(T1, 0), tp(T1, 2), tp(T2, 1)], "consumer-a": [tp(T1, 1), tp(T2, 0), tp(T2, 2)]},
    ),
    (
        "static assignment persistent",
        {T1: 3, T2: 3},
        {
            "consumer1": sub(T1, T2, instance="instance1"),
            "consumer2": sub(T1, T2, instance="instance2"),
            "consumer3": sub(T1, T2, instance="instance3"),
            "consumer4": sub(T1, T2),
        },
        {
            "consumer1": [tp(T1, 0), tp(T2, 1)],
            "consumer2": [tp(T1, 1), tp(T2, 2)],
            "consumer3": [tp(T1, 2)],
            "consumer4": [tp(T2, 0)],
        },
    ),
    (
        "static assignment persistent, dynamic member replaced",
        {T1: 3, T2: 3},
        {
            "consumer1": sub(T1, T2, instance="instance1"),
            "consumer2": sub(T1, T2, instance="instance2"),
            "consumer3": sub(T1, T2, instance="instance3"),
            "consumer5": sub(T1, T2),
        },
        {
            "consumer1": [tp(T1, 0), tp(T2, 1)],
            "consumer2": [tp(T1, 1), tp(T2, 2)],
            "consumer3": [tp(T1, 2)],
            "consumer5": [tp(T2, 0)],
        },
    ),
    # The docstring example of kafka-python's (and Java's) RoundRobinAssignor: unequal subscriptions.
    (
        "unequal subscriptions",
        {"t0": 1, "t1": 2, "t2": 3},
        {"C0": sub("t0"), "C1": sub("t0", "t1"), "C2": sub("t0", "t1", "t2")},
        {
            "C0": [tp("t0", 0)],
            "C1": [tp("t1", 0)],
            "C2": [tp("t1", 1), tp("t2", 0), tp("t2", 1), tp("t2", 2)],
        },
    ),
]


@pytest.mark.parametrize(
    ("partitions", "subs", "expected"),
    [c[1:] for c in ROUNDROBIN_CASES],
    ids=[c[0] for c in ROUNDROBIN_CASES],
)
def test_roundrobin_matches_java(
    partitions: dict[str, int], subs: dict[str, Subscription], expected: dict[str, list[TopicPartition]]
) -> None:
    assert RoundRobinAssignor().assign(partitions, subs) == expected


def test_member_ids_are_ordered_as_java_compares_strings() -> None:
    """Java compares UTF-16 code units: a supplementary character (a surrogate pair,
    0xD83D...) sorts before U+FFFF, although its code point is larger."""
    subs = {"\uffff": sub("t"), "\U0001f600": sub("t")}
    got = RangeAssignor().assign({"t": 2}, subs)
    assert got == {"\U0001f600": [tp("t", 0)], "\uffff": [tp("t", 1)]}
    got = RoundRobinAssignor().assign({"t": 2}, subs)
    assert got == {"\U0001f600": [tp("t", 0)], "\uffff": [tp("t", 1)]}


# ---------------------------------------------------------------- against kafka-python's assignors


def _kafka_python_assign(
    assignor: Any, partitions: dict[str, int], subs: dict[str, Subscription]
) -> dict[str, list[TopicPartition]]:
    cluster = SimpleNamespace(
        partitions_for_topic=lambda t: set(range(partitions[t])) if partitions.get(t) else None
    )
    members = [
        SimpleNamespace(member_id=m, group_instance_id=None, metadata=SimpleNamespace(topics=s.topics))
        for m, s in subs.items()
    ]
    out = assignor.assign(cluster, members)
    return {
        m: sorted(TopicPartition(t, p) for t, ps in a.assigned_partitions for p in ps) for m, a in out.items()
    }


_names = st.sampled_from(["a", "b", "c", "d", "topic", "zz"])
_members = st.dictionaries(
    st.text("mnopq-0123", min_size=1, max_size=6),
    st.lists(_names, min_size=1, max_size=4, unique=True),
    min_size=1,
    max_size=7,
)
_partitions = st.dictionaries(_names, st.integers(0, 9), max_size=6)


@given(_members, _partitions)
def test_range_and_roundrobin_agree_with_kafka_python(
    members: dict[str, list[str]], partitions: dict[str, int]
) -> None:
    """kafka-python's roundrobin fails (KeyError) when it has to skip a member not subscribed
    to a topic, so it is compared with equal subscriptions only (Java's cases above cover
    unequal ones)."""
    from kafka.coordinator.assignors.range import RangePartitionAssignor
    from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor

    own = {m: Subscription(ts) for m, ts in members.items()}
    union = sorted({t for ts in members.values() for t in ts})
    same = {m: Subscription(union) for m in members}
    for ours, theirs, subs in (
        (RangeAssignor(), RangePartitionAssignor, own),
        (RoundRobinAssignor(), RoundRobinPartitionAssignor, same),
        (RoundRobinAssignor(), None, own),
    ):
        got = {m: sorted(ps) for m, ps in ours.assign(partitions, subs).items()}
        if theirs is not None:
            assert got == _kafka_python_assign(theirs, partitions, subs)
        everything = sorted(tp(t, p) for t in union for p in range(partitions.get(t, 0)))
        assert sorted(p for ps in got.values() for p in ps) == everything  # each exactly once
        for m, ps in got.items():
            assert {p.topic for p in ps} <= set(subs[m].topics)


def test_assignors_for() -> None:
    assert [a.name for a in assignors_for(["range", "roundrobin"])] == ["range", "roundrobin"]
    custom = RoundRobinAssignor()
    assert assignors_for([RangeAssignor, custom])[1] is custom
    with pytest.raises(ValueError, match="sticky"):
        assignors_for(["sticky"])
    with pytest.raises(ValueError, match="empty"):
        assignors_for([])
    with pytest.raises(ValueError, match="twice"):
        assignors_for(["range", RangeAssignor()])
    with pytest.raises(ValueError, match="no name"):
        assignors_for([PartitionAssignor()])


# ---------------------------------------------------------------- encoding


def test_subscription_bytes_equal_kafka_pythons() -> None:
    assert (
        encode_subscription(Subscription(["t1", "t2"], b"", version=0)) == KSub(0, ["t1", "t2"], b"").encode()
    )
    assert encode_subscription(Subscription(["t1"], None, version=0)) == KSub(0, ["t1"], None).encode()
    ours = Subscription(["t1", "t2"], b"ud", [tp("t1", 0), tp("t1", 2), tp("t2", 1)], 7, "rack-1", version=3)
    theirs = KSub(
        version=3,
        topics=["t1", "t2"],
        user_data=b"ud",
        generation_id=7,
        rack_id="rack-1",
        owned_partitions=[
            KSub.TopicPartition(topic="t1", partitions=[0, 2]),
            KSub.TopicPartition(topic="t2", partitions=[1]),
        ],
    )
    for version in (1, 2, 3):
        ours.version = version
        assert encode_subscription(ours) == theirs.encode(version=version), version


def test_assignment_bytes_equal_kafka_pythons() -> None:
    parts = [tp("t1", 0), tp("t1", 1), tp("t2", 3)]
    for version in (0, 1, 3):
        ours = encode_assignment(Assignment(parts, b"", version))
        assert ours == KAssign(version, [("t1", [0, 1]), ("t2", [3])], b"").encode(), version
    assert encode_assignment(Assignment([], None)) == KAssign(0, [], None).encode()


def test_decoding_kafka_pythons_bytes() -> None:
    raw = KSub(
        version=1,
        topics=["a", "b"],
        user_data=None,
        owned_partitions=[KSub.TopicPartition(topic="a", partitions=[4])],
    ).encode()
    assert decode_subscription(raw) == Subscription(["a", "b"], None, [tp("a", 4)], version=1)
    raw = KAssign(0, [("a", [0, 2]), ("b", [1])], b"x").encode()
    assert decode_assignment(raw) == Assignment([tp("a", 0), tp("a", 2), tp("b", 1)], b"x", 0)


@given(
    st.lists(st.text(min_size=1, max_size=5), max_size=4, unique=True),
    st.none() | st.binary(max_size=8),
    st.integers(0, 3),
)
def test_subscription_round_trips_through_kafka_python(
    topics: list[str], user_data: bytes | None, version: int
) -> None:
    ours = Subscription(
        topics, user_data, [tp(t, i) for i, t in enumerate(topics)] if version else [], version=version
    )
    raw = encode_subscription(ours)
    theirs = KSub.decode(raw)
    assert list(theirs.topics) == topics and theirs.user_data == user_data
    assert decode_subscription(theirs.encode()) == ours


def test_newer_versions_are_read_leniently() -> None:
    """Kafka reads an unknown newer version with its latest layout, ignoring what follows."""
    v3 = encode_subscription(Subscription(["t"], None, [tp("t", 1)], 5, "r", version=3))
    got = decode_subscription(b"\x00\x09" + v3[2:] + b"new fields")
    assert (got.version, got.topics, got.owned_partitions, got.generation_id, got.rack_id) == (
        9,
        ["t"],
        [tp("t", 1)],
        5,
        "r",
    )
    v0_only = encode_subscription(Subscription(["t"], b"u", version=0))
    assert decode_subscription(b"\x00\x02" + v0_only[2:]).topics == ["t"]  # v2 header, v0 body
    a = encode_assignment(Assignment([tp("t", 0)], b"u", 0))
    assert decode_assignment(b"\x00\x07" + a[2:] + b"more") == Assignment([tp("t", 0)], b"u", 7)
    assert decode_assignment(b"") == Assignment([])


def test_garbage_is_a_consumer_protocol_error() -> None:
    with pytest.raises(ConsumerProtocolError, match="negative"):
        decode_subscription(b"\xff\xff\x00\x00\x00\x00")
    with pytest.raises(ConsumerProtocolError, match="truncated"):
        decode_subscription(b"\x00\x00\x00\x00\x00\x01\x00\x05ab")
    with pytest.raises(ConsumerProtocolError):
        decode_assignment(b"\x00\x00\x7f\xff\xff\xff")
    with pytest.raises(ConsumerProtocolError):
        decode_subscription(b"\x00")
