"""Random and mutated frames of every API at a live broker.

    python -m bench.fuzz_live --frames 1000000 --connections 8     # against a broker it starts
    python -m bench.fuzz_live --bootstrap 127.0.0.1:9092 --frames 100000

Frames come from kproto's own declarations: for a random API key and
version (mostly keys the broker advertises in ApiVersions, sometimes any
key kproto declares, and sometimes a version above kproto's) a body is drawn field by
field (random ints with a bias to edge values, strings from a pool of
awkward names, short arrays, random record bytes), encoded with kproto, and
then, half of the time, damaged (bit flips, insertions, deletions,
truncations, a wrong size prefix) — as in kproto's fuzz tests, but at the
broker over TCP.  The strings come from a bounded pool so auto-created
topics stay bounded.

Checked all the way: every frame is answered with a response carrying its
correlation id (in order), or the connection is closed (then a new one is
opened); the answer to a frame kproto reads as a whole well-formed request
must decode as that API's response at that version; a sentinel connection
gets an ApiVersions answer every second throughout; the broker process is
alive at the end.  Anything else is a finding and stops the run with the
frame that caused it and the frames before it on its connection.  (Damage
that leaves bytes beyond the declared size starts the next frame, which the
broker rightly waits for: the fuzzer opens a new connection after it.)

The million-frame run is documented in bench/results/fuzz-live.md.
"""

from __future__ import annotations

import argparse
import random
import struct
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

import kproto
from kproto import primitives as p
from kproto.registry import REQUESTS
from kproto.schema import Array, Bytes, Field, Message, Nested, Records, String, Versions

_EDGE = {
    id(p.Int8): (-(2**7), 2**7 - 1),
    id(p.Int16): (-(2**15), 2**15 - 1),
    id(p.Int32): (-(2**31), 2**31 - 1),
    id(p.Int64): (-(2**63), 2**63 - 1),
    id(p.UInt32): (0, 2**32 - 1),
    id(p.Varint): (-(2**31), 2**31 - 1),
    id(p.Varlong): (-(2**63), 2**63 - 1),
    id(p.UVarint): (0, 2**32 - 1),
}

NAMES = ["fuzz-a", "fuzz-b", "", ".", "..", "__consumer_offsets", "x" * 250, "ü-topic", "a/b", "fuzz-group"]


@dataclass
class Generator:
    rng: random.Random
    served: frozenset[int] = frozenset()  # the keys the broker advertises; empty: no preference

    def value(self, ftype: Any, version: int, nullable: bool, flexible: bool) -> Any:
        r = self.rng
        if nullable and r.random() < 0.1:
            return None
        if ftype is String:
            return r.choice(NAMES)
        if ftype is Bytes or ftype is Records:
            return r.randbytes(r.choice((0, 1, 8, 61, 100)))
        if isinstance(ftype, Nested):
            return self.struct(ftype.fields, version, flexible)
        if isinstance(ftype, Array):
            n = r.choice((0, 1, 1, 2, 3))
            if isinstance(ftype.of, (list, tuple)):
                return [self.struct(ftype.of, version, flexible) for _ in range(n)]
            return [self.value(ftype.of, version, False, flexible) for _ in range(n)]
        if ftype is p.Boolean:
            return r.random() < 0.5
        if ftype is p.Uuid:
            return r.randbytes(16)
        if ftype is p.Float64:
            return r.random()
        lo, hi = _EDGE.get(id(ftype), (-(2**31), 2**31 - 1))
        roll = r.random()
        if roll < 0.6:
            return max(lo, min(hi, r.randint(-2, 10)))
        if roll < 0.8:
            return r.choice((lo, hi, 0, -1))
        return r.randint(lo, hi)

    def struct(self, fields: Any, version: int, flexible: bool) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields:
            if not isinstance(f, Field) or not f.present_in(version) or f.tag is not None:
                continue
            compact = flexible if f.flexible is None else version in Versions.parse(f.flexible)
            if "wait" in f.name or "timeout" in f.name:
                # Long-polls (Fetch max_wait_ms, JoinGroup timeouts) legitimately hold a
                # request; short ones keep the fuzzer moving.
                out[f.name] = self.rng.randint(-1, 50)
                continue
            out[f.name] = self.value(f.type, version, f.nullable_in(version), compact)
        if flexible:
            out["tagged_fields"] = {}
        return out

    def frame(self, correlation_id: int) -> tuple[int, int, bytes]:
        """(api key, version, frame bytes) — valid or damaged."""
        r = self.rng
        # Mostly keys the broker serves (their answers are checked), sometimes any key kproto
        # declares: most of those only get the connection closed.
        served = [m for m in REQUESTS.values() if m.api_key in self.served]
        msg: Message = r.choice(served if served and r.random() < 0.85 else list(REQUESTS.values()))
        version = r.randint(msg.min_version, msg.max_version + (1 if r.random() < 0.05 else 0))
        api_key = int(msg.api_key or 0)
        try:
            body = self.struct(
                msg.fields, min(version, msg.max_version), msg.is_flexible(min(version, msg.max_version))
            )
            data = bytearray(
                kproto.encode_request(
                    api_key, min(version, msg.max_version), correlation_id, body, client_id="fuzz"
                )
            )
        except kproto.KprotoError:
            data = bytearray(struct.pack(">ihhi", 10, api_key, version, correlation_id) + b"\0\0")
        if version > msg.max_version:
            struct.pack_into(">h", data, 6, version)  # a version above what kproto declares
        if r.random() < 0.5:
            self.damage(data)
        return api_key, version, bytes(data)

    def damage(self, buf: bytearray) -> None:
        r = self.rng
        for _ in range(r.randint(1, 3)):
            op = r.choice(("flip", "insert", "delete", "truncate", "size"))
            pos = r.randint(4, max(4, len(buf) - 1)) if len(buf) > 4 else 0
            if op == "flip" and buf:
                buf[pos % len(buf)] ^= r.randint(1, 255)
            elif op == "insert":
                buf[pos:pos] = r.randbytes(r.randint(1, 8))
            elif op == "delete":
                del buf[pos : pos + r.randint(1, 8)]
            elif op == "truncate":
                del buf[pos:]
        if len(buf) >= 4:
            # keep the size prefix honest unless the damage is to it
            size = len(buf) - 4
            if r.random() < 0.1:
                size = r.choice((size + 1, max(0, size - 1), 2**31 - 1, 0))
            struct.pack_into(">i", buf, 0, size)


@dataclass
class Stats:
    frames: int = 0
    answered: int = 0
    closed: int = 0
    decoded: int = 0  # answers to well-formed requests, decoded as that API's response
    sentinel_checks: int = 0
    sentinel_max_s: float = 0.0  # the slowest sentinel answer: how long the broker kept others waiting
    per_api: dict[int, int] = field(default_factory=dict)


class Finding(Exception):  # noqa: N818 - what a fuzzer reports
    pass


async def _fuzz_connection(host: str, port: int, gen: Generator, budget: list[int], stats: Stats) -> None:
    """One connection at a time: send a frame, expect its answer or a close."""
    while budget[0] > 0:
        stream = await trio.open_tcp_stream(host, port)
        decoder = kproto.FrameDecoder(max_size=1 << 30)
        cid = 0
        history: list[str] = []  # this connection's frames so far, for a finding's report
        async with stream:
            while budget[0] > 0:
                budget[0] -= 1
                cid += 1
                api_key, _version, frame = gen.frame(cid)
                history.append(frame.hex())
                stats.frames += 1
                stats.per_api[api_key] = stats.per_api.get(api_key, 0) + 1
                declared = int.from_bytes(frame[:4], "big", signed=True) if len(frame) >= 4 else -1
                request = _well_formed(frame)
                silent = request is not None and request.api_key == 0 and request.body.acks in (0, -2)
                if silent:
                    # Produce with acks=0 or -2 (rAck) gets no response: a probe behind it must be answered.
                    cid += 1
                    frame += kproto.encode_request(18, 0, cid, {}, client_id="probe")
                try:
                    await stream.send_all(frame)
                    if len(frame) < 4 or 0 <= len(frame) - 4 < declared:
                        # An incomplete frame: the broker rightly waits for the rest.
                        # Ending our side must make it close the connection.
                        await stream.send_eof()
                    with trio.fail_after(10):
                        got = await _next_frame(stream, decoder)
                except (trio.BrokenResourceError, trio.ClosedResourceError, ConnectionResetError):
                    got = None
                except trio.TooSlowError:
                    raise Finding(
                        f"no answer and no close within 10 s: frame {frame.hex()}; "
                        f"the connection's frames before it: {history[:-1]}"
                    ) from None
                if got is None:
                    stats.closed += 1
                    break
                answered = int.from_bytes(got[4:8], "big", signed=True)
                sent_cid = (
                    cid if silent else int.from_bytes(frame[8:12], "big", signed=True)
                )  # damage may change it
                if answered != sent_cid:
                    raise Finding(
                        f"answer for correlation id {answered}, expected {cid}: frame {frame.hex()}"
                    )
                stats.answered += 1
                if silent:
                    _check_response(18, 0, got, frame)
                    stats.decoded += 1
                elif request is not None:
                    _check_response(request.api_key, request.version, got, frame)
                    stats.decoded += 1
                if 0 <= declared < len(frame) - 4:
                    # Bytes beyond the declared size begin the next frame, which the broker
                    # rightly waits to complete (up to its size limit): start afresh.
                    break


def _well_formed(frame: bytes) -> kproto.Request | None:
    """The request ``frame`` holds when kproto reads it whole and its size prefix is right."""
    if len(frame) < 4 or int.from_bytes(frame[:4], "big", signed=True) != len(frame) - 4:
        return None
    try:
        return kproto.decode_request(frame, max_size=1 << 30)
    except kproto.KprotoError:
        return None


def _check_response(api_key: int, version: int, got: bytes, frame: bytes) -> None:
    """The answer to a well-formed request must be a valid response of its API and version.

    ApiVersions at a version the broker does not serve is answered in v0 (Kafka's rule,
    so that any client can read the error).
    """
    try:
        kproto.decode_response(api_key, version, got, max_size=1 << 30)
    except kproto.KprotoError as exc:
        if api_key == 18:
            try:
                kproto.decode_response(18, 0, got, max_size=1 << 30)
                return
            except kproto.KprotoError:
                pass
        raise Finding(
            f"answer to a well-formed request {api_key} v{version} does not decode ({exc}): "
            f"frame {frame.hex()}, answer {got.hex()}"
        ) from None


async def _next_frame(stream: trio.SocketStream, decoder: kproto.FrameDecoder) -> bytes | None:
    while (frame := decoder.next_frame()) is None:
        data = await stream.receive_some(1 << 16)
        if not data:
            return None
        decoder.feed(data)
    return bytes(frame)


async def _sentinel(host: str, port: int, stats: Stats, done: trio.Event) -> None:
    """A well-behaved client that must be served throughout."""
    stream = await trio.open_tcp_stream(host, port)
    decoder = kproto.FrameDecoder()
    cid = 0
    async with stream:
        while not done.is_set():
            cid += 1
            t0 = time.monotonic()
            await stream.send_all(kproto.encode_request(18, 0, cid, {}, client_id="sentinel"))
            try:
                with trio.fail_after(10):
                    frame = await _next_frame(stream, decoder)
            except trio.TooSlowError:
                raise Finding("the sentinel connection was not answered within 10 s") from None
            if frame is None:
                raise Finding("the broker closed the sentinel connection")
            stats.sentinel_checks += 1
            stats.sentinel_max_s = max(stats.sentinel_max_s, time.monotonic() - t0)
            with trio.move_on_after(1.0):
                await done.wait()


async def _served_keys(host: str, port: int) -> frozenset[int]:
    """The API keys the broker advertises in its ApiVersions v0 answer."""
    stream = await trio.open_tcp_stream(host, port)
    decoder = kproto.FrameDecoder()
    async with stream:
        await stream.send_all(kproto.encode_request(18, 0, 1, {}, client_id="fuzz"))
        with trio.fail_after(10):
            frame = await _next_frame(stream, decoder)
    if frame is None:
        raise Finding("the broker closed the connection instead of answering ApiVersions")
    body = kproto.decode_response(18, 0, frame).body
    return frozenset(entry.api_key for entry in body.api_keys)


async def fuzz(host: str, port: int, frames: int, connections: int, seed: int, progress: Any = None) -> Stats:
    stats = Stats()
    budget = [frames]
    done = trio.Event()

    async def report() -> None:
        while not done.is_set():
            if progress:
                progress(stats)
            with trio.move_on_after(0.5):
                await done.wait()

    served = await _served_keys(host, port)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_sentinel, host, port, stats, done)
        nursery.start_soon(report)
        async with trio.open_nursery() as workers:
            for i in range(connections):
                workers.start_soon(
                    _fuzz_connection, host, port, Generator(random.Random(seed + i), served), budget, stats
                )
        done.set()
    return stats


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m bench.fuzz_live",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--frames", type=int, default=100_000, help="frames to send (default 100000)")
    ap.add_argument("--connections", type=int, default=8, help="concurrent fuzzing connections (default 8)")
    ap.add_argument("--seed", type=int, default=1, help="random seed (runs are repeatable per seed)")
    ap.add_argument("--bootstrap", help="HOST:PORT of a running broker (default: start a fresh hmb)")
    args = ap.parse_args(argv)

    from bench.hmb_process import BrokerProcess
    from hmb_client.progress import Progress

    t0 = time.monotonic()
    rss: list[int] = []  # broker RSS: at start, then the latest and the peak
    finding: BaseException | None = None
    stats = Stats()
    with (
        tempfile.TemporaryDirectory(prefix="hmb-fuzz-") as tmp,
        Progress(total=args.frames, unit="frames") as bar,
    ):
        broker = None
        if args.bootstrap:
            host, _, port_s = args.bootstrap.rpartition(":")
            port = int(port_s)
        else:
            broker = BrokerProcess(Path(tmp) / "data").start()
            host, port = "127.0.0.1", broker.port
            rss += [broker.rss_bytes()] * 3

        def show(s: Stats) -> None:
            nonlocal stats
            stats = s
            rate = s.frames / max(1e-9, time.monotonic() - t0)
            if broker is not None and broker.alive():
                rss[1] = broker.rss_bytes()
                rss[2] = max(rss[2], rss[1])
            bar.update(
                s.frames, f"{rate:,.0f} frames/s, {s.closed:,} closes, sentinel ok x{s.sentinel_checks}"
            )

        try:
            stats = trio.run(fuzz, host, port, args.frames, args.connections, args.seed, show)
        except BaseException as exc:  # a Finding, possibly inside an exception group
            finding = exc
        alive = broker is None or broker.alive()
        if broker is not None:
            if alive:
                rss[1] = broker.rss_bytes()
            broker.kill()
    elapsed = time.monotonic() - t0
    print(
        f"{stats.frames:,} frames in {elapsed:.0f} s ({stats.frames / elapsed:,.0f}/s): "
        f"{stats.answered:,} answered ({stats.decoded:,} decoded as valid responses), "
        f"{stats.closed:,} connections closed by the broker, "
        f"sentinel served {stats.sentinel_checks} times (slowest answer {stats.sentinel_max_s:.2f} s), "
        f"broker alive: {alive}"
    )
    print("frames per api key:", dict(sorted(stats.per_api.items())))
    if rss:
        mib = [f"{b / 2**20:.0f} MiB" for b in rss]
        print(f"broker RSS: {mib[0]} at start, {mib[1]} at the end, {mib[2]} at the peak")
    if broker is not None:
        errors = [i for i, line in enumerate(broker.lines) if " ERROR " in line]
        print(f"broker log: {len(broker.lines):,} lines, {len(errors)} ERROR lines")
        for i in errors[:5]:  # with the traceback lines that follow
            end = i + 1
            while end < len(broker.lines) and not broker.lines[end][:4].isdigit():
                end += 1
            print("".join(broker.lines[i : min(end, i + 60)]).rstrip())
    if finding is not None:
        if broker is not None:
            print("the broker's last log lines:")
            for line in broker.lines[-60:]:
                print("   ", line.rstrip())
        print(f"FINDING: {finding!r}")
        for sub in getattr(finding, "exceptions", ()):
            print(f"    {sub!r}")
        return 1
    return 0 if alive else 1


if __name__ == "__main__":
    sys.exit(main())
