"""A stateful Quix Streams application: a running count per word.

    python quix_word_count.py BOOTSTRAP STATE_DIR INPUT OUTPUT EXPECTED_OUTPUTS [GUARANTEE]

GUARANTEE is Quix's ``processing_guarantee``: ``at-least-once`` (the
default) or ``exactly-once`` (a transactional producer, offsets committed
in its transactions, read_committed consumers).

Reads words from INPUT (key = the word), keeps a count per word in Quix's
state store (RocksDB with a changelog topic on the broker), and writes
``word -> count`` to OUTPUT; stops after EXPECTED_OUTPUTS results or 60 s.
Prints the results it produced as JSON lines.  Run with the interpreter that
has quixstreams installed (scripts/test makes .venv-frameworks).
"""

import json
import sys

from quixstreams import Application


def main() -> None:
    bootstrap, state_dir, source, sink, expected = sys.argv[1:6]
    guarantee = sys.argv[6] if len(sys.argv) > 6 else "at-least-once"
    app = Application(
        broker_address=bootstrap,
        consumer_group="quix-word-count",
        auto_offset_reset="earliest",
        state_dir=state_dir,
        processing_guarantee=guarantee,
        loglevel="WARNING",
    )
    words = app.topic(source, key_deserializer="str", value_deserializer="str")
    counts = app.topic(sink, key_serializer="str", value_serializer="json")

    def count(word: str, state) -> dict:  # type: ignore[no-untyped-def]
        total = state.get("count", 0) + 1
        state.set("count", total)
        return {"word": word, "count": total}

    sdf = app.dataframe(words).apply(count, stateful=True).to_topic(counts)
    for row in app.run(sdf, count=int(expected), timeout=60):
        print(json.dumps(row))


if __name__ == "__main__":
    main()
