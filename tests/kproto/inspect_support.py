"""Building tcpdump captures in a test: TCP connections whose segments the test chooses.

A :class:`Capture` collects packets (with dpkt, the library the inspector
reads them with) and writes them as pcap or pcapng with any of the link
types tcpdump uses; a :class:`TcpConnection` keeps the sequence numbers of
both directions so that a test can split frames over segments, put several
in one, repeat a segment, drop one, or start in the middle.
"""

from __future__ import annotations

import io
import ipaddress
import itertools
import json
import struct
from dataclasses import dataclass, field
from typing import Any

import dpkt

import kproto
from kproto.inspect.cli import main

BROKER_PORT = 9092

LINK_ETHERNET = 1
LINK_NULL = 0
LINK_LINUX_SLL = 113
LINK_LINUX_SLL2 = 276
LINK_RAW = 101


def metadata_request(correlation_id: int, topic: str = "events", version: int = 4) -> bytes:
    body = {"topics": [{"name": topic}], "allow_auto_topic_creation": True}
    return kproto.encode_request(kproto.ApiKey.METADATA, version, correlation_id, body, client_id="tester")


def metadata_response(correlation_id: int, topic: str = "events", version: int = 4) -> bytes:
    body = {
        "throttle_time_ms": 0,
        "brokers": [{"node_id": 0, "host": "127.0.0.1", "port": BROKER_PORT, "rack": None}],
        "cluster_id": "c",
        "controller_id": 0,
        "topics": [{"error_code": 0, "name": topic, "is_internal": False, "partitions": []}],
    }
    return kproto.encode_response(kproto.ApiKey.METADATA, version, correlation_id, body)


def api_versions_request(correlation_id: int) -> bytes:
    return kproto.encode_request(kproto.ApiKey.API_VERSIONS, 0, correlation_id, {}, client_id="tester")


def api_versions_response(correlation_id: int) -> bytes:
    body = {"error_code": 0, "api_keys": [{"api_key": 3, "min_version": 0, "max_version": 8}]}
    return kproto.encode_response(kproto.ApiKey.API_VERSIONS, 0, correlation_id, body)


@dataclass
class Capture:
    """Packets in capture order, written out as a pcap (or pcapng) file."""

    link_type: int = LINK_ETHERNET
    packets: list[tuple[float, bytes]] = field(default_factory=list)
    clock: float = 1_700_000_000.0

    def add(self, ip_packet: Any) -> None:
        self.clock += 0.001
        self.packets.append((self.clock, self._link(ip_packet)))

    def _link(self, ip_packet: Any) -> bytes:
        is_v6 = isinstance(ip_packet, dpkt.ip6.IP6)
        ethtype = dpkt.ethernet.ETH_TYPE_IP6 if is_v6 else dpkt.ethernet.ETH_TYPE_IP
        raw = bytes(ip_packet)
        if self.link_type == LINK_ETHERNET:
            return bytes(dpkt.ethernet.Ethernet(src=b"\0" * 6, dst=b"\0" * 6, type=ethtype, data=raw))
        if self.link_type == LINK_LINUX_SLL:
            return bytes(dpkt.sll.SLL(type=0, hrd=772, hlen=6, hdr=b"\0" * 8, ethtype=ethtype, data=raw))
        if self.link_type == LINK_LINUX_SLL2:
            return bytes(
                dpkt.sll2.SLL2(ethtype=ethtype, intindex=1, hrd=772, hlen=6, hdr=b"\0" * 8, data=raw)
            )
        if self.link_type == LINK_NULL:  # BSD loopback: the address family in host byte order
            return struct.pack("=I", 30 if is_v6 else 2) + raw
        if self.link_type == LINK_RAW:
            return raw
        raise ValueError(self.link_type)

    def pcap(self, *, ng: bool = False, snaplen: int = 262144) -> bytes:
        out = io.BytesIO()
        writer_class = dpkt.pcapng.Writer if ng else dpkt.pcap.Writer
        writer = writer_class(out, snaplen=snaplen, linktype=self.link_type)
        for ts, data in self.packets:
            writer.writepkt(data[:snaplen], ts=ts)
        return out.getvalue()


@dataclass
class TcpConnection:
    """One client-broker connection in a :class:`Capture`; ``send`` and ``reply`` add segments."""

    capture: Capture
    client_port: int
    client_ip: str = "127.0.0.1"
    broker_ip: str = "127.0.0.1"
    broker_port: int = BROKER_PORT
    client_seq: int = 1000
    broker_seq: int = 5000

    def _ip(self, src: str, dst: str, tcp: Any) -> Any:
        if ipaddress.ip_address(src).version == 6:
            return dpkt.ip6.IP6(
                src=ipaddress.ip_address(src).packed,
                dst=ipaddress.ip_address(dst).packed,
                nxt=dpkt.ip.IP_PROTO_TCP,
                hlim=64,
                plen=len(bytes(tcp)),
                data=tcp,
            )
        packet = dpkt.ip.IP(
            src=ipaddress.ip_address(src).packed,
            dst=ipaddress.ip_address(dst).packed,
            p=dpkt.ip.IP_PROTO_TCP,
            data=tcp,
        )
        packet.len = len(bytes(packet))
        return packet

    def _segment(self, to_broker: bool, seq: int, data: bytes, flags: int, ack: int) -> None:
        sport, dport = (
            (self.client_port, self.broker_port) if to_broker else (self.broker_port, self.client_port)
        )
        src, dst = (self.client_ip, self.broker_ip) if to_broker else (self.broker_ip, self.client_ip)
        tcp = dpkt.tcp.TCP(
            sport=sport, dport=dport, seq=seq % (1 << 32), ack=ack % (1 << 32), flags=flags, data=data
        )
        self.capture.add(self._ip(src, dst, tcp))

    def handshake(self) -> TcpConnection:
        self._segment(True, self.client_seq, b"", dpkt.tcp.TH_SYN, 0)
        self.client_seq += 1
        self._segment(False, self.broker_seq, b"", dpkt.tcp.TH_SYN | dpkt.tcp.TH_ACK, self.client_seq)
        self.broker_seq += 1
        self._segment(True, self.client_seq, b"", dpkt.tcp.TH_ACK, self.broker_seq)
        return self

    def resend_syn(self) -> None:
        """The handshake's SYN once more, as a client does when the SYN-ACK is late."""
        self._segment(True, self.client_seq - 1, b"", dpkt.tcp.TH_SYN, 0)

    def send(
        self, data: bytes, *, split: tuple[int, ...] = (), to_broker: bool = True, ack: bool = True
    ) -> None:
        """``data`` in segments cut at the offsets in ``split``; the peer acks it all when ``ack``."""
        cuts = [0, *split, len(data)]
        for start, end in itertools.pairwise(cuts):
            self.segment(data[start:end], to_broker=to_broker, offset=start)
        self._advance(to_broker, len(data))
        if ack:
            self.ack(to_broker=not to_broker)

    def reply(self, data: bytes, **kwargs: Any) -> None:
        self.send(data, to_broker=False, **kwargs)

    def segment(self, data: bytes, *, to_broker: bool, offset: int) -> None:
        """One segment at ``offset`` from the direction's next sequence number (negative: sent before)."""
        seq = (self.client_seq if to_broker else self.broker_seq) + offset
        ack = self.broker_seq if to_broker else self.client_seq
        self._segment(to_broker, seq, data, _PSH_ACK, ack)

    def skip(self, n: int, *, to_broker: bool = True) -> None:
        """``n`` bytes the capture never saw (the peer acks them)."""
        self._advance(to_broker, n)

    def _advance(self, to_broker: bool, n: int) -> None:
        if to_broker:
            self.client_seq += n
        else:
            self.broker_seq += n

    def ack(self, *, to_broker: bool) -> None:
        seq = self.client_seq if to_broker else self.broker_seq
        ack = self.broker_seq if to_broker else self.client_seq
        self._segment(to_broker, seq, b"", dpkt.tcp.TH_ACK, ack)

    def close(self) -> None:
        self._segment(True, self.client_seq, b"", dpkt.tcp.TH_FIN | dpkt.tcp.TH_ACK, self.broker_seq)
        self.client_seq += 1
        self._segment(False, self.broker_seq, b"", dpkt.tcp.TH_FIN | dpkt.tcp.TH_ACK, self.client_seq)
        self.broker_seq += 1
        self.ack(to_broker=True)


_PSH_ACK = dpkt.tcp.TH_PUSH | dpkt.tcp.TH_ACK


def inspect(pcap: bytes, *args: str) -> tuple[int, list[dict[str, Any]]]:
    """Run ``python -m kproto pcap - ARGS`` in process on ``pcap``: exit status and the JSON lines."""
    out = io.StringIO()
    status = main(["pcap", "-", *args], out=out, stdin=io.BytesIO(pcap))
    return status, [json.loads(line) for line in out.getvalue().splitlines()]


def summary(events: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """``(connection id, direction, api, correlation id, error type)`` per event: what most tests assert."""
    return [
        (
            e.get("connection", {}).get("id"),
            e["direction"],
            e.get("api"),
            e.get("correlation_id"),
            e["error"]["type"] if "error" in e else None,
        )
        for e in events
    ]
