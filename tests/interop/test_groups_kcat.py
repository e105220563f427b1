"""kcat (Debian's, librdkafka 2.0.2) as balanced consumers: ``kcat -G`` with its defaults.

Three kcat processes join one group over a 6-partition topic; one is
stopped (SIGTERM: kcat closes its consumer, which commits and leaves the
group) and a fourth joins while records keep arriving.  Every record must
be printed exactly once by the group.  kcat prints each record as
``partition offset value``; the test waits on what the processes printed,
never on guessed sleeps.
"""

from __future__ import annotations

import collections
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable

import pytest
from broker_process import BrokerProcess
from test_groups_clients import PARTITIONS, committed, produce

KCAT = shutil.which("kcat") or shutil.which("kafkacat")
pytestmark = [
    pytest.mark.interop,
    pytest.mark.skipif(KCAT is None, reason="kcat is not installed (Debian package 'kcat')"),
]

TOPIC = "kcat-group"
GROUP = "kcat-balanced"


class KcatMember:
    """One ``kcat -G`` process and the records it printed."""

    def __init__(self, bootstrap: str, name: str) -> None:
        assert KCAT is not None
        self.name = name
        self.records: list[tuple[int, int, bytes]] = []
        self.assigned: list[str] = []  # kcat's "rebalanced ... assigned: ..." lines
        self.proc = subprocess.Popen(
            [KCAT, "-b", bootstrap, "-G", GROUP, "-u", "-f", "%p %o %s\\n",
             "-X", "auto.offset.reset=earliest", TOPIC],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )  # fmt: skip
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        threading.Thread(target=self._read_log, daemon=True).start()

    def _read_log(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            text = line.decode(errors="replace")
            if "assigned:" in text:
                self.assigned.append(text.split("assigned:", 1)[1].strip())

    @property
    def has_partitions(self) -> bool:
        return bool(self.assigned) and TOPIC in self.assigned[-1]

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            partition, offset, value = line.rstrip(b"\n").split(b" ", 2)
            self.records.append((int(partition), int(offset), value))

    def stop(self) -> None:
        """SIGTERM: kcat closes the consumer (commit, LeaveGroup) and exits."""
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(30)
        self._reader.join(10)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


def wait_until(
    condition: Callable[[], bool], what: str, timeout: float = 90.0, members: list[KcatMember] | None = None
) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            state = [(m.name, m.assigned[-3:], len(m.records)) for m in members or []]
            raise AssertionError(f"timed out waiting for {what}: {state}")
        time.sleep(0.05)  # polling what the processes printed


def test_kcat_group_of_three_one_leaves_one_joins_exactly_once(
    make_broker: Callable[..., BrokerProcess],
) -> None:
    broker = make_broker(f"num.partitions={PARTITIONS}")
    expected = produce(broker.bootstrap, TOPIC, "first", 40)
    members = [KcatMember(broker.bootstrap, f"m{i}") for i in range(3)]
    try:
        wait_until(
            lambda: all(m.has_partitions for m in members), "three members with partitions", members=members
        )
        expected |= produce(broker.bootstrap, TOPIC, "shared", 40)

        def seen() -> list[bytes]:
            return [v for m in members for _p, _o, v in m.records]

        wait_until(
            lambda: set(seen()) >= expected, "the first records consumed by the group", members=members
        )
        assert all(m.records for m in members[:3]), "the three members shared the partitions"
        members[2].stop()  # leaves: its partitions go to the others
        expected |= produce(broker.bootstrap, TOPIC, "second", 40)
        members.append(KcatMember(broker.bootstrap, "m3"))
        wait_until(lambda: members[3].has_partitions, "the new member's assignment", members=members)
        expected |= produce(broker.bootstrap, TOPIC, "third", 40)
        wait_until(lambda: set(seen()) >= expected, "every record consumed after the rebalance")
        wait_until(lambda: bool(members[3].records), "the new member receiving records")
        counts = collections.Counter(seen())
        dupes = {v: c for v, c in counts.items() if c > 1}
        assert not dupes, f"consumed more than once: {list(dupes.items())[:5]}"
        assert set(counts) == expected
        for m in members:
            if m.proc.poll() is None:
                m.stop()  # kcat commits what it consumed when it closes
    finally:
        for m in members:
            m.kill()
    # The group's committed offsets are at the end of every partition: 4 rounds of 40.
    assert committed(broker.bootstrap, GROUP, TOPIC) == dict.fromkeys(range(PARTITIONS), 160)
