"""What requests ask of the controller, held until its next step acts on it.

Rules:

* Handlers never write ZooKeeper: ControlledShutdown and ElectLeaders leave
  their wish here, nudge the broker's cluster loop, and wait (bounded) for a
  controller step to have acted on it.  The step reads the wishes in trio,
  acts on them in its worker thread, and answers in trio again.
* The set of brokers shutting down is the controller's memory, as Kafka's
  controller keeps it: a broker leaves it when its registration goes, and a
  new controller starts with it empty (a broker still stopping asks again).
* Auto leader rebalance is a timer here too: the loop wakes when it is due.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

import trio

from hmb.cluster.controller import ElectionResults
from hmb.cluster.elections import Electorate
from hmb.cluster.view import ClusterView
from hmb.config import BrokerConfig

UNCLEAN_KEY = "unclean.leader.election.enable"


@dataclass
class PendingElection:
    """One ElectLeaders request: what it asks, and its answer once a step ran it."""

    election_type: int
    partitions: list[tuple[str, int]] | None  # None: every partition
    done: trio.Event = field(default_factory=trio.Event)
    results: ElectionResults | None = None  # None after ``done``: this broker was not controller


class ControllerInbox:
    def __init__(self, config: BrokerConfig) -> None:
        self.config = config
        self.shutting_down: set[int] = set()
        self.elections: list[PendingElection] = []
        #: controller steps completed; a handler waits for it to pass the value it saw
        self.steps = 0
        #: who was shutting down for the latest step: a step already under way when a broker
        #: asked did not act for it, and its ControlledShutdown waits for the next one
        self.acted_for: frozenset[int] = frozenset()
        self.next_rebalance = math.inf  # monotonic time of the next imbalance check

    def electorate(self, view: ClusterView) -> Electorate:
        """Who may lead now; forgets brokers whose registration has gone."""
        self.shutting_down &= set(view.brokers)
        configs = view.configs
        default = self.config.unclean_leader_election_enable

        def unclean_allowed(topic: str, configs: Mapping[str, Mapping[str, str]] = configs) -> bool:
            value = (configs.get(topic) or {}).get(UNCLEAN_KEY)
            return default if value is None else value.strip().lower() == "true"

        self.acted_for = frozenset(self.shutting_down)
        return Electorate(self.acted_for, unclean_allowed)

    def took_office(self) -> None:
        """This broker just became controller: nobody is shutting down yet, the timer starts."""
        self.shutting_down.clear()
        self.next_rebalance = time.monotonic() + self.config.leader_imbalance_check_interval_seconds

    def rebalance_due(self) -> bool:
        if not self.config.auto_leader_rebalance_enable or time.monotonic() < self.next_rebalance:
            return False
        self.next_rebalance = time.monotonic() + self.config.leader_imbalance_check_interval_seconds
        return True

    def seconds_to_rebalance(self) -> float:
        if not self.config.auto_leader_rebalance_enable:
            return math.inf
        return max(0.0, self.next_rebalance - time.monotonic())

    def take(self) -> list[PendingElection]:
        taken, self.elections = self.elections, []
        return taken

    @staticmethod
    def answer(taken: list[PendingElection], results: list[ElectionResults] | None) -> None:
        """Wake the waiting handlers (``results`` None: this broker is not the controller)."""
        for i, pending in enumerate(taken):
            pending.results = None if results is None else results[i]
            pending.done.set()
