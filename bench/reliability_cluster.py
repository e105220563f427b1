"""The delivery studies on a cluster: ``python -m bench reliability ... --cluster 3``.

Each run gets its own ZooKeeper (Debian's package, started as the cluster
tests start it) and ``--cluster`` hmb brokers, and one topic with 3
partitions, replication factor 3 and ``min.insync.replicas`` as the paper
of the matrix used (:data:`MIN_ISR`).  The producer writes to all three
partitions; the read-back reads all three.  Besides the single-broker
study's figures, a run records the leader changes it saw (the sum of the
partitions' leader-epoch increases, from the state znodes) and the
producer's retries (librdkafka's ``txretries``; for rAck the monitor's
resends).

Where the faults act (one layout per fault, so a run without a fault has
nothing in its path):

=============  ==============================================================
``loss``       The client runs in a network namespace; ZooKeeper and every
               broker listen on the host end of its veth pair and nftables
               drops P % of the namespace's packets each way: all of the
               client's traffic (to the three brokers, and the rAck
               monitor's to ZooKeeper) is lossy, the brokers' among
               themselves is not -- the rAck thesis's set-up, which faulted
               the producer's container only.
``delay``      A fault proxy in front of each broker's advertised listener
``stall``      (the brokers advertise the proxy).  The brokers fetch from
``reset``      each other through the advertised address too, so replication
               is delayed as TRAK delayed every container's traffic.
``kill``       The leader of partition 0 (being written) is killed with
               SIGKILL at the window's start and restarted ``value`` s later.
``partition``  The leader of partition 0 is cut off at the window's start for
               ``value`` s: its front proxy and the proxy between it and
               ZooKeeper stop forwarding, so no client or broker reaches it
               and its ZooKeeper session expires (the controller elects
               another leader); its own connections out are not cut.
=============  ==============================================================

The exactly-once row needs the transaction coordinator to work in a cluster:
it is probed once (``init_transactions`` on the run's cluster) and, where it
fails, :class:`RowSkippedError` says why; the matrix runner records that and leaves the
row out.
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from bench import netns
from bench.faultproxy import FaultProxy, Faults
from bench.hmb_process import ROOT, BrokerProcess, free_port
from bench.reliability import Fault, Outcome, RowSkippedError, Run, _outcome, read_back

PARTITIONS = 3
REPLICATION = 3
#: min.insync.replicas per matrix: the rAck thesis set 3; TRAK does not say, so Kafka's
#: default (1) of the Kafka 2.2 it ran; the fault matrices use 2, the usual RF=3 setting
MIN_ISR = {"rack": 3, "trak": 1, "faults": 2, "quick": 2}
#: zookeeper.session.timeout.ms: Kafka 2.2's default (6 s) for the matrices, 2 s for the
#: suite's quick runs so that a partitioned leader loses its session within its window
SESSION_MS = {"quick": 2000}
DEFAULT_SESSION_MS = 6000
CHROOT = "/hmb-study"
SETTLE_S = 60.0


def unavailable() -> str | None:
    """Why a cluster cannot be started here (None when it can)."""
    with _test_support():
        from zookeeper import missing  # type: ignore[import-not-found]

        return missing()


@contextlib.contextmanager
def _test_support() -> Iterator[None]:
    """The cluster tests' ZooKeeper launcher, importable from the benchmarks."""
    path = str(ROOT / "tests" / "support")
    sys.path.insert(0, path)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(path)


@dataclass
class ClusterPath:
    """A running cluster and what sits between it and the client for one run's fault."""

    brokers: dict[int, BrokerProcess]
    bootstrap: str  # what the client is given
    zk_connect: str  # ZooKeeper with the chroot, as the client reaches it (rAck receipts)
    zk: Any  # a kazoo client of the benchmark's own, for the state znodes
    link: netns.LossyLink | None = None
    front: dict[int, FaultProxy] = field(default_factory=dict)  # broker -> its listener's proxy
    zk_front: dict[int, FaultProxy] = field(default_factory=dict)  # broker -> its ZooKeeper proxy

    def state(self, topic: str, partition: int) -> dict[str, Any]:
        import json

        from kazoo.exceptions import NoNodeError

        try:
            data, _ = self.zk.get(f"/brokers/topics/{topic}/partitions/{partition}/state")
        except NoNodeError:
            return {}
        return dict(json.loads(data))

    def epochs(self, topic: str) -> list[int]:
        return [int(self.state(topic, p).get("leader_epoch", 0)) for p in range(PARTITIONS)]

    def leader(self, topic: str, partition: int = 0) -> int:
        """The partition's leader now (waits for one while an election is under way)."""
        leader = _wait(lambda: self.state(topic, partition).get("leader", -1) + 1, "a leader") - 1
        return int(leader)


def _wait(condition: Any, what: str, timeout: float = SETTLE_S) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise RuntimeError(f"the cluster did not settle: {what}")
        time.sleep(0.05)  # polling a condition, bounded by the deadline
    return value


@contextlib.contextmanager
def cluster_path(run: Run, home: Path, size: int) -> Iterator[ClusterPath]:
    """ZooKeeper and ``size`` brokers laid out for ``run``'s fault (module docstring)."""
    from kazoo.client import KazooClient

    kind = run.fault.kind
    session_ms = SESSION_MS.get(run.study, DEFAULT_SESSION_MS)
    with contextlib.ExitStack() as stack, _test_support():
        from zookeeper import ZooKeeperProcess

        link = stack.enter_context(netns.LossyLink()) if kind == "loss" else None
        host = link.host_addr if link else "127.0.0.1"
        (home / "zk").mkdir(parents=True)
        zk = ZooKeeperProcess(home / "zk")
        zk.host = host  # the client in the namespace reaches it there (the rAck monitor)
        stack.enter_context(zk)
        proxied = kind in ("delay", "stall", "reset", "partition")
        front_ports = {i: free_port() for i in range(size)} if proxied else {}
        zk_front = {}
        if kind == "partition":
            zk_front = {i: FaultProxy((host, zk.port)) for i in range(size)}
            for proxy in zk_front.values():
                proxy.start_in_thread()
                stack.callback(proxy.stop)
        brokers: dict[int, BrokerProcess] = {}
        for i in range(size):
            zk_addr = f"127.0.0.1:{zk_front[i].port}" if zk_front else zk.connect
            overrides = [
                f"zookeeper.connect={zk_addr}{CHROOT}",
                f"broker.id={i}",
                f"zookeeper.session.timeout.ms={session_ms}",
                "replica.lag.time.max.ms=10000",
                f"num.partitions={PARTITIONS}",
            ]
            if proxied:
                overrides.append(f"advertised.listeners=PLAINTEXT://127.0.0.1:{front_ports[i]}")
            brokers[i] = BrokerProcess(home / f"broker{i}", *overrides, host=host)
            stack.callback(brokers[i].kill)
            brokers[i].start(timeout=60)
        front = {}
        for i, port in front_ports.items():
            front[i] = FaultProxy((host, brokers[i].port), seed=run.repetition * 10 + i)
            front[i].start_in_thread(port)
            stack.callback(front[i].stop)
        kazoo = KazooClient(hosts=zk.connect + CHROOT, timeout=10)
        kazoo.start(timeout=10)
        stack.callback(kazoo.close)
        stack.callback(kazoo.stop)
        _wait(lambda: len(kazoo.get_children("/brokers/ids")) == size, "every broker registered")
        if front:
            bootstrap = ",".join(f"127.0.0.1:{p.port}" for p in front.values())
        else:
            bootstrap = ",".join(b.bootstrap for b in brokers.values())
        yield ClusterPath(brokers, bootstrap, f"{host}:{zk.port}{CHROOT}", kazoo, link, front, zk_front)


def create_replicated_topic(path: ClusterPath, min_isr: int) -> str:
    """A new topic of :data:`PARTITIONS` partitions at :data:`REPLICATION`, its leaders elected
    and every ISR whole before the producer starts."""
    import confluent_kafka as ck
    from confluent_kafka.admin import AdminClient, NewTopic

    name = f"study-{time.time_ns() % 10**12}"
    admin = AdminClient({"bootstrap.servers": path.bootstrap, "log_level": 3})
    topic = NewTopic(name, PARTITIONS, REPLICATION, config={"min.insync.replicas": str(min_isr)})

    def created() -> bool:
        """The broker asked may not see every broker yet (its view lags ZooKeeper's
        registrations by a watch): INVALID_REPLICATION_FACTOR then, and asking again helps."""
        try:
            admin.create_topics([topic])[name].result(30)
        except ck.KafkaException as exc:
            if exc.args[0].code() != ck.KafkaError.INVALID_REPLICATION_FACTOR:
                raise
            return False
        return True

    _wait(created, f"{name} created at RF={REPLICATION}")

    def ready() -> bool:
        states = [path.state(name, p) for p in range(PARTITIONS)]
        return all(s.get("leader", -1) >= 0 and len(s.get("isr", ())) == REPLICATION for s in states)

    _wait(ready, f"{name}'s leaders and full ISRs")

    # every broker's metadata names the leaders, so the first produce finds them
    def known() -> bool:
        listed = admin.list_topics(name, timeout=10).topics[name].partitions.values()
        return len(listed) == PARTITIONS and all(p.leader >= 0 for p in listed)

    _wait(known, f"{name} in the brokers' metadata")
    return name


class FaultSchedule:
    """Starts and lifts ``fault`` on ``path`` as the run's clock passes its window."""

    def __init__(self, fault: Fault, path: ClusterPath, topic: str) -> None:
        self.fault = fault
        self.path = path
        self.topic = topic
        self.window = fault.window or ((0.0, fault.value) if fault.kind == "stall" else None)
        if fault.kind in ("kill", "partition"):
            start = fault.window[0] if fault.window else 1.0
            self.window = (start, start + fault.value)
        self.windowed = self.window is not None
        self.state = "before"
        self.victim = -1

    def begin(self) -> None:
        """A fault for the whole run starts before the producer does."""
        if not self.windowed:
            self._set(True)

    def tick(self, t: float) -> None:
        assert self.window is not None or self.state == "before"
        if self.window is None:
            return
        if self.state == "before" and t >= self.window[0]:
            self._set(True)
            self.state = "during"
        elif self.state == "during" and t >= self.window[1]:
            self._set(False)
            self.state = "after"

    def end(self) -> None:
        if self.state == "during" or not self.windowed:
            self._set(False)
        self.state = "after"

    def _set(self, on: bool) -> None:
        kind, path = self.fault.kind, self.path
        if kind == "loss" and path.link:
            path.link.set_loss(self.fault.value if on else 0)
        elif kind in ("delay", "stall", "reset"):
            faults = Faults()
            if on and kind == "delay":
                faults = Faults(delay_ms=self.fault.value)
            elif on and kind == "stall":
                faults = Faults(stall=True)
            elif on:
                faults = Faults(reset_probability=self.fault.value)
            for proxy in path.front.values():
                proxy.set_faults(faults)
        elif kind == "kill":
            if on:
                self.victim = path.leader(self.topic)
                path.brokers[self.victim].kill()
            elif not path.brokers[self.victim].alive():
                path.brokers[self.victim].restart()
        elif kind == "partition":
            if on:
                self.victim = path.leader(self.topic)
            for proxies in (path.front, path.zk_front):
                proxies[self.victim].set_faults(Faults(stall=on))


def execute_cluster(run: Run, size: int, delivery_timeout_s: float = 120.0) -> Outcome:
    """One run on a fresh cluster, start to verdict; every process it starts is stopped."""
    from bench.studies import Driver

    min_isr = MIN_ISR.get(run.study, 2)
    with (
        tempfile.TemporaryDirectory(prefix="hmb-relc-") as tmp,
        cluster_path(run, Path(tmp), size) as path,
    ):
        topic = create_replicated_topic(path, min_isr)
        if run.semantics.transaction_records:
            _probe_transactions(path.bootstrap, topic)
        first_epochs = path.epochs(topic)
        schedule = FaultSchedule(run.fault, path, topic)
        schedule.begin()
        args = [
            "sequenced",
            *("--client", run.client, "--bootstrap", path.bootstrap, "--topic", topic),
            *("--records", str(run.records), "--message-size", str(run.message_size)),
            *("--acks", str(run.semantics.acks), "--rate", str(run.rate)),
            *("--delivery-timeout", str(delivery_timeout_s)),
            *(["--idempotent"] if run.semantics.idempotent else []),
            *("--transaction-records", str(run.semantics.transaction_records)),
            *("--rack-zookeeper", path.zk_connect),
        ]
        driver = Driver(*args, prefix=path.link.exec_prefix if path.link else None)
        try:
            t0 = time.monotonic()
            # a leader's kill or cut is held for its whole window even when the producer is
            # done sooner (acks=0 waits for nobody): the read-back must see what it left
            while driver.running() or schedule.state == "during":
                schedule.tick(time.monotonic() - t0)
                time.sleep(0.02)  # a schedule tick: faults start and end on time
            schedule.end()
            result = driver.finish(delivery_timeout_s + 120)
        finally:
            driver.kill()
            schedule.end()
        for broker in path.brokers.values():
            if not broker.alive():
                broker.restart()
        _wait(lambda: all(path.state(topic, p).get("leader", -1) >= 0 for p in range(PARTITIONS)), "leaders")
        seqs = read_back(path.bootstrap, topic, partitions=PARTITIONS)
        changes = sum(b - a for a, b in zip(first_epochs, path.epochs(topic), strict=True))
    outcome = _outcome(run, result, seqs, schedule.windowed)
    return replace(
        outcome,
        cluster=size,
        partitions=PARTITIONS,
        min_isr=min_isr,
        leader_changes=changes,
        retries=result.get("retries"),
    )


def _probe_transactions(bootstrap: str, topic: str) -> None:
    """Raise :class:`RowSkippedError` unless a transactional producer can commit on this cluster."""
    import confluent_kafka as ck

    p = ck.Producer({"bootstrap.servers": bootstrap, "transactional.id": f"probe-{topic}", "log_level": 0})
    try:
        p.init_transactions(20)
        p.begin_transaction()
        p.commit_transaction(20)
    except ck.KafkaException as exc:
        raise RowSkippedError(
            "exactly-once: a transactional producer cannot commit on this cluster "
            f"(the transaction coordinator does not serve a cluster in this build: {exc.args[0]})"
        ) from None


def cluster_runs(runs: list[Run], matrix: str, size: int) -> list[Run]:
    """The matrix's runs on a cluster.  ``kill`` kills the leader of the partition being
    written and keeps it down longer than a ZooKeeper session (so that another broker
    takes over); each kill gets a twin run that cuts the leader off the network instead."""
    down_s = 3.0 if matrix == "quick" else 10.0
    out, partitions = [], []
    for run in runs:
        run = replace(run, cluster=size)
        if run.fault.kind == "kill":
            window = run.fault.window or (1.0, 1.0)
            run = replace(run, fault=Fault("kill", down_s, window))
            partitions.append(replace(run, fault=Fault("partition", down_s, window)))
        out.append(run)
    return out + partitions
