"""A minimal blocking Kafka wire client built on kproto, for raw protocol tests.

Unlike a real client it sends exactly what a test asks for, including
nonsense, and reports a closed connection instead of reconnecting.
"""

from __future__ import annotations

import socket
from typing import Any

import kproto


class WireClient:
    def __init__(self, bootstrap: str, timeout: float = 10.0) -> None:
        host, port = bootstrap.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        self.correlation_id = 0
        self._decoder = kproto.FrameDecoder()

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> WireClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def read_frame(self) -> bytes | None:
        """The next response frame, or None when the broker closed the connection."""
        while (frame := self._decoder.next_frame()) is None:
            data = self.sock.recv(1 << 20)
            if not data:
                return None
            self._decoder.feed(data)
        return frame

    def send(self, api_key: int, version: int, body: dict[str, Any], *, client_id: str = "wire-test") -> int:
        self.correlation_id += 1
        self.sock.sendall(
            kproto.encode_request(api_key, version, self.correlation_id, body, client_id=client_id)
        )
        return self.correlation_id

    def request(self, api_key: int, version: int, body: dict[str, Any]) -> Any:
        cid = self.send(api_key, version, body)
        frame = self.read_frame()
        assert frame is not None, "broker closed the connection"
        resp = kproto.decode_response(api_key, version, frame)
        assert resp.correlation_id == cid
        return resp.body

    def is_closed_by_peer(self) -> bool:
        """True when the broker has closed this connection (EOF or reset)."""
        try:
            return self.sock.recv(1) == b""
        except (ConnectionResetError, BrokenPipeError):
            return True


def produce_body(topic: str, partition: int, records: bytes, acks: int = 1) -> dict[str, Any]:
    return {
        "acks": acks,
        "timeout_ms": 1000,
        "topic_data": [{"name": topic, "partition_data": [{"index": partition, "records": records}]}],
    }


def fetch_body(
    topic: str,
    partition: int,
    offset: int,
    *,
    max_bytes: int = 1 << 20,
    max_wait_ms: int = 0,
    min_bytes: int = 0,
) -> dict[str, Any]:
    return {
        "replica_id": -1,
        "max_wait_ms": max_wait_ms,
        "min_bytes": min_bytes,
        "topics": [
            {
                "topic": topic,
                "partitions": [
                    {"partition": partition, "fetch_offset": offset, "partition_max_bytes": max_bytes}
                ],
            }
        ],
    }


def metadata_body(*topics: str) -> dict[str, Any]:
    return {"topics": [{"name": t} for t in topics]}


def partitions_of(c: WireClient, topic: str) -> int | None:
    """How many partitions ``topic`` has (Metadata v4, no auto-creation); None when it does not exist."""
    body = {"topics": [{"name": topic}], "allow_auto_topic_creation": False}
    t = c.request(kproto.ApiKey.METADATA, 4, body).topics[0]
    return None if t.error_code else len(t.partitions)


def produce_value(c: WireClient, topic: str, value: bytes, partition: int = 0) -> Any:
    """Produce one record holding ``value`` (Produce v8, acks=1); the partition's response."""
    from kproto.records import RecordBatchBuilder

    b = RecordBatchBuilder()
    b.append(None, value)
    body = produce_body(topic, partition, b.build()) | {"transactional_id": None}
    return c.request(kproto.ApiKey.PRODUCE, 8, body).responses[0].partition_responses[0]


def metadata(c: WireClient, version: int, topics: list[str] | None, *, auto: bool = True) -> Any:
    """A Metadata request of ``version`` (``topics`` None: every topic)."""
    body = {
        "topics": None if topics is None else [{"name": t} for t in topics],
        "allow_auto_topic_creation": auto,
        "include_cluster_authorized_operations": False,
        "include_topic_authorized_operations": False,
    }
    return c.request(kproto.ApiKey.METADATA, version, body)
