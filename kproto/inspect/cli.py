"""``python -m kproto``: Kafka frames and captures as JSON lines.

Two commands: ``frame`` decodes frames given as hex or raw bytes, ``pcap``
decodes the Kafka conversations in a tcpdump capture.  Output is one JSON
object per line on stdout, one per request and response, flushed as soon as
it is known (so a live ``tcpdump -w -`` can be piped in).  The exit status
is 0 when every frame decoded, 1 when some did not (they are in the output
with an ``error`` object), 2 for bad arguments or an unreadable input.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import IO, Any, BinaryIO

from kproto.inspect.conversation import inspect_capture
from kproto.inspect.frames import decode_frames, looks_like_hex, parse_api, parse_input
from kproto.inspect.pcap import CaptureError, read_segments
from kproto.inspect.render import Options

__all__ = ["main"]

DESCRIPTION = """\
Decode Apache Kafka wire-protocol frames to JSON lines, with kproto's grammars
(every API key and version kproto knows; flexible versions included).

  frame   frames given as hex text or raw bytes (arguments, files or stdin)
  pcap    every request and response in a tcpdump capture (pcap or pcapng),
          responses paired with their requests by correlation id
"""

EPILOG = """\
examples:
  python -m kproto frame 0000001b000300080000000700026d650000000100066576656e7473010000
  python -m kproto frame - < frames.bin                  # hex or raw bytes on stdin
  python -m kproto frame --response Metadata:8 reply.bin
  tcpdump -i lo -w kafka.pcap 'tcp port 9092'           # then:
  python -m kproto pcap kafka.pcap --records | jq 'select(.api == "Produce")'
  tcpdump -i any -U -w - 'tcp port 9092' | python -m kproto pcap -

each line holds: direction ("request"/"response"), api (Kafka's name), api_key,
version, correlation_id, client_id (requests), body (the decoded fields; bytes
as hex or base64; record sets summarised per batch: base_offset, magic, size,
count, compression, producer; --records decodes their records too) and, from a
capture, ts, time, connection {id, src, dst} and latency_ms (responses).
A frame that cannot be decoded has an "error" object: its "type" is kproto's
exception (DecodeError, UnsupportedVersionError, FrameTooLargeError ...) or one
of the capture's conditions: UnmatchedResponse (no captured request has its
correlation id), MissingBytes (the capture lost bytes), Unsynchronised (bytes
skipped before the first recognisable frame, as when a capture starts in the
middle of a connection), TruncatedFrame (the input ends inside a frame).
Such events count the bytes not decoded (skipped_bytes) and the bytes the
capture does not hold (missing_bytes).
"""


def _options(args: argparse.Namespace) -> Options:
    return Options(bytes_format=args.bytes, records=args.records)


def _emit(events: Iterable[dict[str, Any]], out: IO[str]) -> int:
    failed = False
    for event in events:
        failed = failed or "error" in event
        out.write(json.dumps(event) + "\n")
        out.flush()
    return 1 if failed else 0


def _read_source(source: str, stdin: BinaryIO) -> bytes:
    if source == "-":
        return stdin.read()
    path = Path(source)
    try:
        is_file = path.is_file()
    except OSError:  # hex longer than a file name may be
        is_file = False
    if is_file:
        return path.read_bytes()
    if not looks_like_hex(source.encode()):
        raise ValueError(f"{source!r} is neither a file nor hex text")
    return source.encode()


def _frame(args: argparse.Namespace, out: IO[str], stdin: BinaryIO) -> int:
    response_to = parse_api(args.response) if args.response else None
    prefixed = False if args.no_prefix else None
    status = 0
    for source in args.sources or ["-"]:
        data = parse_input(_read_source(source, stdin), args.form)
        status |= _emit(decode_frames(data, _options(args), response_to=response_to, prefixed=prefixed), out)
    return status


def _pcap(args: argparse.Namespace, out: IO[str], stdin: BinaryIO) -> int:
    ports = set(args.port or [9092])
    if args.capture == "-":
        return _emit(inspect_capture(read_segments(stdin, ports), ports, _options(args)), out)
    with open(args.capture, "rb") as f:
        return _emit(inspect_capture(read_segments(f, ports), ports, _options(args)), out)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m kproto",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--bytes", choices=("hex", "base64"), default="hex", help="how bytes fields are written (default hex)"
    )
    common.add_argument(
        "--records", action="store_true", help="decode the records of record sets, not only their batches"
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="{frame,pcap}")

    frame = commands.add_parser(
        "frame",
        parents=[common],
        help="decode frames given as hex or raw bytes",
        description="Decode request frames (or, with --response, response frames) given as hex text\n"
        "or raw bytes. Several frames may follow each other; each carries its 4-byte size\n"
        "prefix, as on the wire.",
        epilog="examples:\n  python -m kproto frame 0000000d00120000000000010003686d62\n"
        "  python -m kproto frame --response ApiVersions:0 - < reply.hex",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    frame.add_argument(
        "sources",
        nargs="*",
        metavar="HEX|FILE|-",
        help="hex text, a file (hex or raw bytes) or - for stdin (default)",
    )
    form = frame.add_mutually_exclusive_group()
    form.add_argument("--hex", dest="form", action="store_const", const="hex", help="the input is hex text")
    form.add_argument("--raw", dest="form", action="store_const", const="raw", help="the input is raw bytes")
    frame.set_defaults(form="auto")
    frame.add_argument(
        "--response",
        metavar="API:VERSION",
        help="the frames are responses to requests of this API and version "
        "(Kafka's name or number: Metadata:12, 3:12)",
    )
    frame.add_argument(
        "--no-prefix",
        action="store_true",
        help="the input is one frame without its size prefix (guessed otherwise)",
    )

    pcap = commands.add_parser(
        "pcap",
        parents=[common],
        help="decode the Kafka traffic in a tcpdump capture",
        description="Decode every request and response in a pcap or pcapng capture (Ethernet, Linux\n"
        "cooked and loopback link types; IPv4 and IPv6), reassembling TCP and pairing each\n"
        "response with its request. Needs dpkt: pip install 'hmb-py[inspect]'.",
        epilog="examples:\n  python -m kproto pcap kafka.pcap --port 9092 --port 9093\n"
        "  tcpdump -i lo -U -w - 'tcp port 9092' | python -m kproto pcap -",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    pcap.add_argument("capture", metavar="FILE|-", help="the capture file, or - for stdin")
    pcap.add_argument(
        "--port",
        type=int,
        action="append",
        help="a broker port; repeat for several (default 9092): traffic to it is requests, from it responses",
    )
    return parser


def main(argv: Sequence[str] | None = None, out: IO[str] | None = None, stdin: BinaryIO | None = None) -> int:
    """Run the command; returns the exit status."""
    args = _parser().parse_args(argv)
    out = out or sys.stdout
    stdin = stdin or sys.stdin.buffer
    try:
        if args.command == "frame":
            return _frame(args, out, stdin)
        return _pcap(args, out, stdin)
    except BrokenPipeError:  # pragma: no cover - `| head`
        return 0
    except (CaptureError, ValueError, OSError) as exc:
        print(f"python -m kproto {args.command}: {exc}", file=sys.stderr)
        return 2
