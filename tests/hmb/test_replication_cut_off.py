"""Pure parts of replication hardening: when a broker trusts its view (a disconnection from
ZooKeeper makes it stop leading), what its Metadata names while cut off, and the format of
``replication-offset-checkpoint``."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

pytest.importorskip("kazoo")

from hmb.api.cluster_metadata import partitions
from hmb.cluster.layout import PartitionState, TopicAssignment
from hmb.cluster.node import ClusterNode
from hmb.cluster.view import ClusterView
from hmb.log import hw_checkpoint


def _view(leader: int, isr: tuple[int, ...], live: tuple[int, ...]) -> ClusterView:
    return ClusterView(
        brokers={b: SimpleNamespace() for b in live},  # type: ignore[misc]
        topics={"t": TopicAssignment({0: (0, 1, 2)}, "")},
        states={("t", 0): PartitionState(leader, 7, isr, 1, 0)},
    )


def _node(view: ClusterView, disconnects_then: int, disconnects_now: int, lost: bool = False) -> ClusterNode:
    node = ClusterNode.__new__(ClusterNode)  # only what leads() reads: no ZooKeeper here
    node.broker_id = 0
    node.view = view
    node._view_disconnects = disconnects_then
    node.session = SimpleNamespace(disconnects=disconnects_now, lost=lost)  # type: ignore[assignment]
    return node


def test_a_leader_trusts_its_view_only_when_read_after_the_last_disconnection() -> None:
    view = _view(0, (0, 1, 2), (0, 1, 2))
    assert _node(view, 3, 3).leads("t", 0)
    assert not _node(view, 3, 4).leads("t", 0)  # suspended (or lost) since the view was read
    assert not _node(view, 3, 3, lost=True).leads("t", 0)  # lost, not registered again yet
    assert not _node(view, -1, 0).leads("t", 0)  # no view read since the start


def test_a_cut_off_broker_names_the_broker_the_failover_rule_elects() -> None:
    view = _view(0, (0, 2, 1), (0, 1, 2))
    [trusted] = partitions(view, "t")
    assert (trusted["leader_id"], trusted["leader_epoch"]) == (0, 7)
    [cut] = partitions(view, "t", cut_off=0)
    assert (cut["leader_id"], cut["leader_epoch"], cut["error_code"]) == (2, 7, 0)
    [other] = partitions(_view(1, (1, 0), (0, 1)), "t", cut_off=0)
    assert other["leader_id"] == 1  # a partition another broker leads is named as it is
    [alone] = partitions(_view(0, (0,), (0, 1, 2)), "t", cut_off=0)
    assert alone["leader_id"] == -1 and alone["error_code"] != 0  # nobody else in sync


def test_the_checkpoint_is_kafkas_format(tmp_path: Path) -> None:
    hw_checkpoint.write(tmp_path, [("orders", 3, 42), ("orders", 0, 1500), ("a-b", 1, 0)])
    text = (tmp_path / "replication-offset-checkpoint").read_text()
    assert text == "0\n3\na-b 1 0\norders 0 1500\norders 3 42\n"
    other = tmp_path / "other"
    other.mkdir()
    hw_checkpoint.write(other, [("x", 0, 9)])
    assert hw_checkpoint.read_all([tmp_path, other, tmp_path / "none"]) == {
        ("a-b", 1): 0,
        ("orders", 0): 1500,
        ("orders", 3): 42,
        ("x", 0): 9,
    }
    (other / "replication-offset-checkpoint").write_text("1\n0\n")  # a version it cannot read
    assert ("x", 0) not in hw_checkpoint.read_all([other])
