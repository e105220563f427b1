"""What a partition leader remembers of the partitions it had another broker's coordinator add.

Rules (transaction version 2 in a cluster, KIP-890 part 2):

* The client of transaction version 2 adds no partition itself: the leader
  of a partition that receives the first transactional batch of a
  transaction asks the transactional id's coordinator to add the partition
  (:func:`hmb.interbroker.txn_add.add_at_coordinator`) and appends the
  batch only once the coordinator said yes.  Without that, the coordinator
  would not know the partition, write no marker there at the end, and the
  batch would stay invisible to read_committed readers for ever.
* The answer is remembered per producer id and epoch: later batches of the
  same transaction to the same partition cost no request.  A transaction of
  version 2 ends with a new epoch, so an (id, epoch) pair names one
  transaction; a marker this broker writes for a producer id ends what it
  remembered of that id (:meth:`RemoteAdds.forget`), and so bounds the memory.
* Only an add the coordinator accepted is remembered: a refusal or no answer
  is asked again with the client's retry.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from kproto import ErrorCode

TP = tuple[str, int]
#: (transactional id, producer id, epoch, partitions) -> the coordinator's code
AskCoordinator = Callable[[str, int, int, list[TP]], Awaitable[int]]


class RemoteAdds:
    """The partitions of open transactions coordinated elsewhere that this leader had added."""

    def __init__(self, ask: AskCoordinator) -> None:
        self._ask = ask
        self._added: dict[int, tuple[int, set[TP]]] = {}  # producer id -> (epoch, partitions)

    async def add(self, tid: str, producer_id: int, epoch: int, tp: TP) -> int:
        """NONE once ``tp`` is in the transaction of ``producer_id`` at ``epoch``; else the refusal."""
        known = self._added.get(producer_id)
        if known is not None and known[0] == epoch and tp in known[1]:
            return ErrorCode.NONE
        code = await self._ask(tid, producer_id, epoch, [tp])
        if code == ErrorCode.NONE:
            known = self._added.get(producer_id)
            if known is None or known[0] != epoch:
                known = self._added[producer_id] = (epoch, set())
            known[1].add(tp)
        return code

    def forget(self, producer_id: int) -> None:
        """A marker of ``producer_id`` was written here: its transaction ended."""
        self._added.pop(producer_id, None)

    def __len__(self) -> int:
        return len(self._added)
