"""Reading a capture file: pcap or pcapng, down to TCP segments.

The file formats and the Ethernet, IP and TCP headers are read with dpkt
(an optional dependency: ``pip install hmb-py[inspect]``).  What tcpdump
writes on Linux and BSD is understood:

==========  ======================================================  =====
link type   written by                                              value
==========  ======================================================  =====
EN10MB      ``tcpdump -i eth0``, and ``-i lo`` on Linux              1
LINUX_SLL   ``tcpdump -i any`` (libpcap before 1.10)                 113
LINUX_SLL2  ``tcpdump -i any`` (libpcap 1.10 and later)              276
NULL, LOOP  ``tcpdump -i lo0`` on BSD and macOS                      0, 108
RAW         raw IP (tun devices, some VPNs)                          101, 12, 14, 228, 229
==========  ======================================================  =====

IPv4 and IPv6 (with extension headers) are both read; IP fragments are
skipped and counted, as TCP over a loopback or LAN is not fragmented.
Rule: nothing here knows Kafka; this module yields :class:`Segment` s.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

try:
    import dpkt
except ImportError:  # pragma: no cover - exercised by users without the extra
    dpkt = None

__all__ = ["CaptureError", "Segment", "read_segments"]

TCP_PROTOCOL = 6
_FIN, _SYN, _ACK = 0x01, 0x02, 0x10
_PCAP_MAGICS = {b"\xa1\xb2\xc3\xd4", b"\xd4\xc3\xb2\xa1", b"\xa1\xb2\x3c\x4d", b"\x4d\x3c\xb2\xa1"}
_PCAPNG_MAGIC = b"\x0a\x0d\x0d\x0a"
_RAW_LINK_TYPES = {101, 12, 14, 228, 229}
_IPV6_FRAGMENT = 44


class CaptureError(Exception):
    """A capture this module cannot read (format, link type, missing dpkt)."""


@dataclass(frozen=True)
class Segment:
    """One TCP segment: addresses as ``"ip:port"`` strings, flags, sequence numbers, payload."""

    ts: float
    src: str
    dst: str
    src_port: int
    dst_port: int
    seq: int
    ack: int | None  # None when the ACK flag is not set
    syn: bool
    fin: bool
    payload: bytes
    missing: int  # payload bytes the capture cut off (snap length)


class _Prefixed:
    """A file object with bytes already read put back in front (pipes cannot seek)."""

    def __init__(self, head: bytes, rest: BinaryIO) -> None:
        self._head = head
        self._rest = rest
        self.name = getattr(rest, "name", "<stream>")

    def read(self, n: int = -1) -> bytes:
        if not self._head:
            return self._rest.read(n)
        if n < 0:
            out, self._head = self._head + self._rest.read(), b""
            return out
        out, self._head = self._head[:n], self._head[n:]
        if len(out) < n:
            out += self._rest.read(n - len(out))
        return out


def _reader(fileobj: BinaryIO) -> Any:
    if dpkt is None:
        raise CaptureError("reading captures needs dpkt: pip install 'hmb-py[inspect]' (or pip install dpkt)")
    magic = fileobj.read(4)
    wrapped = _Prefixed(magic, fileobj)
    try:
        if magic in _PCAP_MAGICS:
            return dpkt.pcap.Reader(wrapped)
        if magic == _PCAPNG_MAGIC:
            return dpkt.pcapng.Reader(wrapped)
    except (ValueError, dpkt.UnpackError) as exc:
        raise CaptureError(f"not a readable capture: {exc}") from None
    raise CaptureError(f"not a pcap or pcapng file (starts with {magic.hex() or 'nothing'})")


def _network_layer(link_type: int, buf: bytes) -> Any:
    """The IP or IPv6 packet of a captured frame, or None when it carries something else."""
    if link_type == 1:
        inner = dpkt.ethernet.Ethernet(buf).data
    elif link_type == 113:
        inner = dpkt.sll.SLL(buf).data
    elif link_type == 276:
        inner = dpkt.sll2.SLL2(buf).data
    elif link_type in (0, 108):
        inner = dpkt.loopback.Loopback(buf).data
    elif link_type in _RAW_LINK_TYPES:
        inner = buf
    else:
        raise CaptureError(
            f"link type {link_type} is not supported (Ethernet, Linux cooked, loopback, raw IP are)"
        )
    if isinstance(inner, bytes) and inner:
        version = inner[0] >> 4
        inner = dpkt.ip.IP(inner) if version == 4 else dpkt.ip6.IP6(inner) if version == 6 else None
    if isinstance(inner, (dpkt.ip.IP, dpkt.ip6.IP6)):
        return inner
    return None


def _address(packet: Any) -> tuple[str, str]:
    src = ipaddress.ip_address(packet.src)
    dst = ipaddress.ip_address(packet.dst)
    return str(src), str(dst)


def _endpoint(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _segment(ts: float, packet: Any) -> Segment | None:
    if isinstance(packet, dpkt.ip.IP):
        if packet.p != TCP_PROTOCOL or packet.mf or packet.offset:
            return None
        expected = packet.len - packet.hl * 4
    else:
        extensions = getattr(packet, "extension_hdrs", None) or {}
        if packet.p != TCP_PROTOCOL or extensions.get(_IPV6_FRAGMENT) is not None:
            return None
        expected = packet.plen - sum(len(h) for h in extensions.values() if h is not None)
    tcp = packet.data
    if isinstance(tcp, bytes):
        try:
            tcp = dpkt.tcp.TCP(tcp)
        except (dpkt.UnpackError, dpkt.NeedData):
            return None
    if not isinstance(tcp, dpkt.tcp.TCP):
        return None
    payload = bytes(tcp.data)
    header = tcp.off * 4
    missing = max(0, expected - header - len(payload))
    src, dst = _address(packet)
    return Segment(
        ts=float(ts),
        src=_endpoint(src, tcp.sport),
        dst=_endpoint(dst, tcp.dport),
        src_port=tcp.sport,
        dst_port=tcp.dport,
        seq=tcp.seq,
        ack=tcp.ack if tcp.flags & _ACK else None,
        syn=bool(tcp.flags & _SYN),
        fin=bool(tcp.flags & _FIN),
        payload=payload,
        missing=missing,
    )


def read_segments(fileobj: BinaryIO, ports: set[int] | None = None) -> Iterator[Segment]:
    """The TCP segments of a capture, in capture order; with ``ports`` only those to or from them.

    Packets that are not TCP over IP are skipped; a capture cut off in the
    middle of a packet ends the iteration there.
    """
    reader = _reader(fileobj)
    link_type = reader.datalink()
    packets = iter(reader)
    while True:
        try:
            ts, buf = next(packets)
        except StopIteration:
            return
        except (dpkt.UnpackError, dpkt.NeedData, ValueError):
            return  # a capture file cut short (tcpdump killed mid-write)
        try:
            packet = _network_layer(link_type, buf)
            segment = _segment(ts, packet) if packet is not None else None
        except (dpkt.UnpackError, dpkt.NeedData):
            continue
        if segment is None:
            continue
        if ports is None or segment.src_port in ports or segment.dst_port in ports:
            yield segment
