"""The idempotent producer under connection resets: no duplicates, nothing failed.

Found by the reliability study (``python -m bench reliability faults``): with
1 % of forwarded chunks answered by a TCP reset, hmb_client's idempotent
producer wrote 0.6 % of its records twice.  A batch selected before a
connection broke went out on the new connection ahead of the broken
connection's retries, pushed the oldest of them out of the broker's
five-batch memory, whose retry then got OUT_OF_ORDER_SEQUENCE_NUMBER, was
taken for "never appended", and was written again under a new producer id.
And a reset during the ApiVersions exchange was taken for a 0.8 broker:
message format 0, on which every idempotent batch failed.
"""

from __future__ import annotations

import collections
import struct
from collections.abc import Callable

import pytest
from broker_process import BrokerProcess

from bench.faultproxy import FaultProxy, Faults
from bench.hmb_process import free_port
from hmb_client.consumer import Consumer
from hmb_client.producer import Producer
from hmb_client.producer.batches import ProducerBatch
from hmb_client.producer.idempotence import Idempotence
from hmb_client.structs import TopicPartition


def _batch(seq_hint: int) -> ProducerBatch:
    b = ProducerBatch("t", 0, 60.0)
    b.keys.append(None)
    b.values.append(b"v%d" % seq_hint)
    b.timestamps.append(0)
    return b


def test_a_batch_selected_before_a_connection_broke_waits_for_the_retries() -> None:
    idem = Idempotence()
    idem.producer_id, idem.producer_epoch, idem.new_id_wanted = 7, 0, False
    first = [_batch(i) for i in range(5)]
    sent, held = idem.select(first)
    assert sent == first and not held
    later = _batch(5)
    sent, _ = idem.select([later])  # selected while the five are still in flight
    assert sent == [later] and idem.may_write(later)
    for b in first:  # then the connection breaks under the five
        idem.connection_lost(b)
    assert not idem.may_write(later), "it would overtake the retries of the lost five"
    idem.not_sent(later)
    sent, held = idem.select([*first, later])
    assert sent == [first[0]] and held == [*first[1:], later]  # retries go one at a time, oldest first
    assert idem.may_write(first[0])
    assert [b.base_sequence for b in [*first, later]] == [0, 1, 2, 3, 4, 5]  # never re-sequenced


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_idempotent_producer_through_resets_writes_each_record_once(
    make_broker: Callable[..., BrokerProcess], seed: int
) -> None:
    proxy_port = free_port()
    broker = make_broker(f"advertised.listeners=PLAINTEXT://127.0.0.1:{proxy_port}")
    proxy = FaultProxy(("127.0.0.1", int(broker.bootstrap.rsplit(":", 1)[1])), seed=seed)
    proxy.start_in_thread(proxy_port)
    bootstrap = f"127.0.0.1:{proxy_port}"
    try:
        n = 60_000
        with Producer(bootstrap, enable_idempotence=True, linger_ms=5) as p:
            p.partitions_for("resets")  # the topic exists before the faults start
            proxy.set_faults(Faults(reset_probability=0.03))
            futures = [p.send("resets", struct.pack(">q", i) + b"x" * 92, partition=0) for i in range(n)]
            p.flush(120)
            errors = [f.exception(0) for f in futures if f.exception(0) is not None]
            proxy.set_faults(Faults())
        assert proxy.stats.resets > 0, "no reset happened: the test proves nothing"
        assert not errors, errors[:3]
        with Consumer(bootstrap, auto_offset_reset="earliest") as c:
            c.assign([TopicPartition("resets", 0)])
            ids: list[int] = []
            while len(ids) < n:
                batch = c.poll(timeout=10.0)
                assert batch, f"read {len(ids)} of {n}"
                ids += [struct.unpack_from(">q", r.value)[0] for r in batch]
            tp = TopicPartition("resets", 0)
            c.seek_to_end(tp)
            end = c.position(tp)
        counts = collections.Counter(ids)
        assert end == n, f"the log holds {end} records for {n} sent"
        assert len(ids) == n and len(counts) == n, f"{len(ids) - len(counts)} duplicates"
    finally:
        proxy.stop()
