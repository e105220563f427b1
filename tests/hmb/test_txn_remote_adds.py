"""A partition leader's memory of the partitions another broker's coordinator added (transaction
version 2 in a cluster): asked once per partition and transaction, asked again after a marker,
and a refusal is never remembered."""

from __future__ import annotations

import trio

from hmb.txn.remote_adds import RemoteAdds
from kproto import ErrorCode


def test_the_coordinator_is_asked_once_per_partition_and_transaction() -> None:
    asked: list[tuple[str, int, int, list[tuple[str, int]]]] = []
    answer = {"code": int(ErrorCode.NONE)}

    async def ask(tid: str, pid: int, epoch: int, tps: list[tuple[str, int]]) -> int:
        asked.append((tid, pid, epoch, tps))
        return answer["code"]

    async def main() -> None:
        adds = RemoteAdds(ask)
        assert await adds.add("t", 7, 0, ("a", 0)) == ErrorCode.NONE
        assert await adds.add("t", 7, 0, ("a", 0)) == ErrorCode.NONE  # remembered: not asked
        assert await adds.add("t", 7, 0, ("a", 1)) == ErrorCode.NONE  # another partition: asked
        assert len(asked) == 2
        assert await adds.add("t", 7, 1, ("a", 0)) == ErrorCode.NONE  # the next transaction: asked
        assert len(asked) == 3 and len(adds) == 1
        adds.forget(7)  # a marker was written here: the transaction ended
        assert len(adds) == 0
        answer["code"] = int(ErrorCode.CONCURRENT_TRANSACTIONS)
        assert await adds.add("t", 7, 1, ("a", 0)) == ErrorCode.CONCURRENT_TRANSACTIONS
        assert await adds.add("t", 7, 1, ("a", 0)) == ErrorCode.CONCURRENT_TRANSACTIONS  # not remembered
        assert len(asked) == 5 and len(adds) == 0

    trio.run(main)
