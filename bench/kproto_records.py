"""Would decoding into slotted record classes instead of Containers make kproto's decode 3x kafka-python's?

    python -m bench.kproto_records            # about a minute on 2 cores
    python -m bench.kproto_records --freeze   # imports frozen first (as ``hmb serve`` does)
    python -m bench.kproto_records --quick    # a few seconds

Before anyone builds a mapping API on record classes, this measures what
they could win, on the two responses the speed-up target names (Metadata
v12, 100 topics x 10 partitions; Fetch v16, 50 partitions of 1 KiB
records; the frames of :mod:`bench.kproto_codec`).  Four ways of making a
decoded struct:

* ``container``: what kproto yields today, ``Container(name=value, ...)``;
* ``slots``: one class per struct shape with ``__slots__``, made by
  ``object.__new__(cls)`` and one attribute store per field;
* ``init``: the same class made by a positional ``__init__``;
* ``tuple``: one ``tuple`` subclass per shape (``__slots__ = ()``), made by
  ``cls((value, ...))`` (fields read by index or a property).

Two tables, each row's calls interleaved in every round with kafka-python's
decode of the same frame, min / median µs per call and the speed-up
``kafka-python / that``:

* objects alone: a function making as many structs (each way), int lists
  and blobs as the decoded response holds, the cheapest way, reading
  nothing (as ``bench.kproto_codec --floor``): the bound of any decoder
  into those values;
* whole decode: kproto's generated decoder (:mod:`kproto.fastcodec`,
  header and body, nothing else changed) writing each way, and
  ``kproto.decode_response`` as it is.

The record classes here carry only their fields: the mapping methods a
real one needs (``__getitem__``, ``keys``, ``__eq__``...) live on the class
and do not change what making one costs.
"""

from __future__ import annotations

import argparse
import functools
import gc
import os
import struct
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import kproto
from bench.kproto_codec import CASES, FRAMES, _batch, _walk, kafka_decode, speedup, timing
from kproto import fastcodec
from kproto.codec import response_header_version
from kproto.headers import RESPONSE_HEADER
from kproto.registry import response_message

STYLES = ("container", "slots", "init", "tuple")
NAMES = ("metadata-v12", "fetch-v16")


def record_class(style: str, names: tuple[str, ...]) -> type:
    """One class for a struct of ``names``, made the ``style`` way."""
    if style == "tuple":
        return type("Record", (tuple,), {"__slots__": ()})
    attrs: dict[str, Any] = {"__slots__": names}
    if style == "init":
        args = ", ".join(("self", *names))
        body = "; ".join(f"self.{n} = {n}" for n in names) or "pass"
        exec(f"def __init__({args}):\n    {body}", attrs)
        attrs.pop("__builtins__", None)
    return type("Record", (), attrs)


def make_source(style: str, cls: str, target: str, items: list[tuple[str, str]]) -> list[str]:
    """Statements setting ``target`` to a struct of ``items`` (name, value source), the ``style`` way."""
    values = [v for _, v in items]
    if style == "container":
        return [f"{target} = Container(" + ", ".join(f"{n}={v}" for n, v in items) + ")"]
    if style == "tuple":
        return [f"{target} = {cls}(({', '.join(values)}{',' if len(values) == 1 else ''}))"]
    if style == "init":
        return [f"{target} = {cls}({', '.join(values)})"]
    return [f"{target} = _new({cls})", *(f"{target}.{n} = {v}" for n, v in items)]


class RecordGen(fastcodec._Gen):
    """fastcodec's writer of decoders, making each struct the ``style`` way."""

    def __init__(self, style: str) -> None:
        super().__init__()
        self.style = style
        self.globs["_new"] = object.__new__

    def struct(self, ind: int, target: str, items: list[tuple[str, str]]) -> None:
        if self.style == "container":
            return super().struct(ind, target, items)
        cls = self.const("R", record_class(self.style, tuple(n for n, _ in items)))
        for line in make_source(self.style, cls, target, items):
            self.emit(ind, line)


def maker(style: str, counts: Counter[tuple[str, int]], data: bytes) -> Callable[[], None]:
    """A function making the objects ``counts`` lists, structs the ``style`` way, reading nothing."""
    body: list[str] = []
    env: dict[str, Any] = {"Container": fastcodec.Container, "data": data, "_new": object.__new__}
    for (kind, size), n in sorted(counts.items()):
        if kind == "struct":
            names = tuple(f"f{i}" for i in range(size))
            env[f"R{size}"] = record_class(style, names)
            stmts = make_source(style, f"R{size}", "_x", [(name, "0") for name in names])
        elif kind == "ints":
            env[f"ints{size}"] = struct.Struct(f">{size}i").unpack_from
            stmts = [f"list(ints{size}(data, 0))"]
        elif kind == "blob":
            stmts = [f"data[0:{size}]"]
        else:
            stmts = ["[]"]
        body += stmts * n
    exec("def make():\n    " + "\n    ".join(body or ["pass"]), env)
    return env["make"]


def decoder(style: str, name: str) -> Callable[[], Any]:
    """The generated decoder of case ``name`` (header and body), structs made the ``style`` way."""
    key, version, _, _ = CASES[name]
    frame = FRAMES[name]
    header = fastcodec.generate_decoder(
        RESPONSE_HEADER, response_header_version(key, version), RecordGen(style)
    )
    body = fastcodec.generate_decoder(response_message(key, version), version, RecordGen(style))
    if header is None or body is None:
        raise AssertionError(f"{name}: no generated decoder")

    def decode() -> Any:
        _, pos = header(frame, 4)
        value, pos = body(frame, pos)
        if pos != len(frame):
            raise AssertionError(name)
        return value

    return decode


def calls() -> dict[tuple[str, str], Callable[[], Any]]:
    """(case, what) -> call, for every measured call."""
    out: dict[tuple[str, str], Callable[[], Any]] = {}
    for name in NAMES:
        key, version, cls, _ = CASES[name]
        frame = FRAMES[name]
        counts: Counter[tuple[str, int]] = Counter()
        _walk(kproto.decode_response(key, version, frame).body, counts)
        out[name, "kafka-python decode"] = functools.partial(kafka_decode, cls, version, frame)
        out[name, "kproto.decode_response"] = functools.partial(kproto.decode_response, key, version, frame)
        for style in STYLES:
            out[name, f"objects alone, {style}"] = maker(style, counts, frame)
        for style in STYLES:
            decode = decoder(style, name)
            decode()
            out[name, f"decoder, {style}"] = decode
    return out


def measure(rounds: int, budget_s: float) -> dict[tuple[str, str], list[float]]:
    """(case, what) -> samples (µs per call), every call interleaved in each round."""
    todo = calls()
    sizes = {k: _batch(c, budget_s) for k, c in todo.items()}
    samples: dict[tuple[str, str], list[float]] = {k: [] for k in todo}
    for _ in range(rounds):
        for k, call in todo.items():
            n = sizes[k]
            start = time.perf_counter()
            for _ in range(n):
                call()
            samples[k].append((time.perf_counter() - start) / n * 1e6)
    return samples


def table(samples: dict[tuple[str, str], list[float]]) -> list[str]:
    lines = [
        "| case | what | µs (min / median) | speed-up vs kafka-python (min / median) |",
        "| --- | --- | ---: | ---: |",
    ]
    for (name, what), ours in samples.items():
        theirs = samples[name, "kafka-python decode"]
        lines.append(f"| {name} | {what} | {timing(ours)} | {speedup(ours, theirs)} |")
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="7 rounds of 20 ms samples instead of 25 of 40 ms"
    )
    parser.add_argument("--freeze", action="store_true", help="gc.freeze() what the imports made, first")
    args = parser.parse_args(argv)
    if args.freeze:
        gc.freeze()
    rounds, budget = (7, 0.02) if args.quick else (25, 0.04)
    load_before = os.getloadavg()
    lines = table(measure(rounds, budget))
    load_after = os.getloadavg()
    lines += [
        "",
        f"{rounds} interleaved rounds{', imports frozen' if args.freeze else ''};"
        f" load average (1, 5, 15 min) {', '.join(f'{x:.2f}' for x in load_before)} before,"
        f" {', '.join(f'{x:.2f}' for x in load_after)} after.",
    ]
    print("\n".join(lines))


if __name__ == "__main__":
    main()
