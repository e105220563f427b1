"""An exactly-once consume-transform-produce application (librdkafka), to be killed.

    python -m bench.eos_app BOOTSTRAP INPUT OUTPUT GROUP TRANSACTIONAL_ID TOTAL

Reads partition 0 of INPUT from the group's committed offset (read_committed),
writes each value with an ``out:`` prefix to partition 0 of OUTPUT and
commits the input offsets in the same transaction, a few records at a
time, until the group's position reaches TOTAL; then exits 0.  A
transaction that fails abortably is aborted and the input re-read from the
committed offset; any other failure exits non-zero (:mod:`bench.eos_kills`
starts the application again, as a supervisor would).
"""

import sys
import time

import confluent_kafka as ck


def committed_offset(consumer: ck.Consumer, tp: ck.TopicPartition) -> int:
    [got] = consumer.committed([tp], 30)
    return max(got.offset, 0)


def main() -> int:
    bootstrap, source, sink, group, tid, total = sys.argv[1:7]
    quiet = {"log_level": 0}
    consumer = ck.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "enable.auto.commit": False,
            "isolation.level": "read_committed",
            **quiet,
        }
    )
    producer = ck.Producer({"bootstrap.servers": bootstrap, "transactional.id": tid, "linger.ms": 1, **quiet})
    producer.init_transactions(60)
    tp = ck.TopicPartition(source, 0)
    consumer.assign([ck.TopicPartition(source, 0, committed_offset(consumer, tp))])
    deadline = time.monotonic() + 1800  # a bound for a run nobody kills; the loops kill far sooner
    while time.monotonic() < deadline:
        msgs = [m for m in consumer.consume(50, 0.5) if not m.error()]
        if not msgs:
            if committed_offset(consumer, tp) >= int(total):
                return 0
            continue
        try:
            producer.begin_transaction()
            for m in msgs:
                producer.produce(sink, b"out:" + (m.value() or b""), partition=0)
            position = [ck.TopicPartition(source, 0, (msgs[-1].offset() or 0) + 1)]
            producer.send_offsets_to_transaction(position, consumer.consumer_group_metadata(), 30)
            producer.commit_transaction(30)
        except ck.KafkaException as exc:
            error = exc.args[0]
            if not error.txn_requires_abort():
                raise
            producer.abort_transaction(30)
            consumer.seek(ck.TopicPartition(source, 0, committed_offset(consumer, tp)))
    return 1


if __name__ == "__main__":
    sys.exit(main())
