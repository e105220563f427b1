"""A stateful Faust application: a running count per word.

    python faust_word_count.py BOOTSTRAP STATE_DIR INPUT OUTPUT EXPECTED_INPUTS [GUARANTEE]

GUARANTEE is Faust's ``processing_guarantee``: ``at_least_once`` (the
default) or ``exactly_once`` (one transactional producer per input
partition, the consumed offsets committed in its transactions, the table's
changelog read back read_committed).

Reads words from INPUT (key = the word), keeps a count per word in a Faust
Table (in memory, backed by a changelog topic on the broker), and writes
``{"word": word, "count": n}`` to OUTPUT for every input record.  Prints the
results it produced as JSON lines.  Run with the interpreter that has
faust-streaming installed (scripts/test makes .venv-frameworks).

It stops itself, the way a SIGTERM would stop it, once it has processed
EXPECTED_INPUTS records AND the broker has acknowledged every write they
caused (OUTPUT and the table's changelog): the worker's shutdown then commits
the consumed offsets (exactly-once: ends the open transaction).  Stopping
right after the last record is not enough: Faust queues a table's changelog
write in its producer buffer and, at shutdown, commits before draining that
buffer, so the last changelog record would be sent after the transaction
ended and be lost.  It gives up with exit status 1 after 60 s, and exits
with the worker's status when the worker crashed.
"""

import asyncio
import json
import os
import signal
import sys
from collections import Counter
from typing import Any

import faust

DEADLINE_S = 60.0


def main() -> None:
    bootstrap, state_dir, source, sink, expected_text = sys.argv[1:6]
    guarantee = sys.argv[6] if len(sys.argv) > 6 else "at_least_once"
    expected = int(expected_text)
    app = faust.App(
        "faust-word-count",
        broker=f"kafka://{bootstrap}",
        store="memory://",
        datadir=state_dir,
        processing_guarantee=guarantee,
        topic_partitions=1,
        web_enabled=False,
    )
    words = app.topic(source, key_type=bytes, value_type=bytes, key_serializer="raw", value_serializer="raw")
    counts = app.topic(sink, key_type=bytes, key_serializer="raw", value_serializer="json")
    table = app.Table("word-counts", default=int, partitions=1)
    processed = 0
    acknowledged: Counter[str] = Counter()  # writes the broker acknowledged, per topic

    def stop() -> None:
        """Stop the worker through its own signal handling, which commits first."""
        os.kill(os.getpid(), signal.SIGTERM)

    def maybe_stop() -> None:
        changelog = table.changelog_topic.get_topic_name()
        if processed == expected and acknowledged[sink] == acknowledged[changelog] == expected:
            stop()

    class Acknowledgements(faust.Sensor):
        """Counts the writes the broker acknowledged (Faust's sensor hook for a finished send)."""

        def on_send_completed(self, producer: Any, state: Any, metadata: Any) -> None:
            acknowledged[metadata.topic] += 1
            maybe_stop()

    app.sensors.add(Acknowledgements())

    @app.agent(words)
    async def count(stream):  # type: ignore[no-untyped-def]
        nonlocal processed
        async for key, _value in stream.items():
            word = key.decode()
            table[word] += 1
            row = {"word": word, "count": table[word]}
            await counts.send(key=key, value=row)
            print(json.dumps(row), flush=True)
            processed += 1
            maybe_stop()

    @app.task
    async def deadline() -> None:
        asyncio.get_running_loop().call_later(DEADLINE_S, stop)

    # the worker's console output (a progress spinner) goes to stderr: stdout holds only results
    worker = faust.Worker(app, loglevel="WARNING", quiet=True, redirect_stdouts=False, stdout=sys.stderr)
    status: Any = 0
    try:
        worker.execute_from_commandline()
    except SystemExit as exc:
        status = exc.code
    if processed != expected:
        print(f"processed {processed} of {expected} records in {DEADLINE_S} s", file=sys.stderr)
        sys.exit(1)
    sys.exit(status)


if __name__ == "__main__":
    main()
