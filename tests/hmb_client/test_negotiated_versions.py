"""hmb_client sends the newest version both sides speak, flexible ones included.

The client's table (``CLIENT_VERSIONS``) reaches the newest versions of
Produce (v13, topics by id: the producer knows their ids from Metadata),
Fetch (v18, topics by id), ApiVersions, Metadata,
FindCoordinator, the group APIs and OffsetCommit/OffsetFetch (v10, topics
by id: the consumer, which knows their ids; the admin names topics, v9);
against hmb, which serves them too, a producer, a consumer in a group and
the admin's group tools must use exactly those versions (read back from the
broker's request log) and still work.  Against a broker that
knows an older ApiVersions only, the client must ask again in a version the
broker lists (Kafka's rule: the answer to an unknown version is
UNSUPPORTED_VERSION in the v0 layout).
"""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Iterator

import pytest
from admin_support import consume_and_commit, produce_n
from broker_process import InProcessBroker
from test_modern_wire import negotiated

import kproto
from hmb_client.admin import Admin
from hmb_client.connection import CLIENT_VERSIONS, decode_api_versions
from hmb_client.structs import OffsetAndMetadata, TopicPartition
from kproto import ApiKey, ErrorCode

NEWEST = {
    ApiKey.PRODUCE: 13,
    ApiKey.FETCH: 18,
    ApiKey.API_VERSIONS: 4,
    ApiKey.METADATA: 13,
    ApiKey.FIND_COORDINATOR: 6,
    ApiKey.JOIN_GROUP: 9,
    ApiKey.SYNC_GROUP: 5,
    ApiKey.HEARTBEAT: 4,
    ApiKey.LEAVE_GROUP: 5,
    ApiKey.OFFSET_COMMIT: 10,
    ApiKey.OFFSET_FETCH: 10,
    ApiKey.LIST_GROUPS: 5,
    ApiKey.DESCRIBE_GROUPS: 6,
}
"""What a client and a broker that both speak Kafka 4.x's versions of these keys use."""


def test_the_client_table_reaches_the_newest_versions() -> None:
    assert {k: CLIENT_VERSIONS[k][1] for k in NEWEST} == NEWEST


def test_a_producer_a_group_and_the_admin_use_the_newest_versions(in_process_broker: InProcessBroker) -> None:
    b = in_process_broker
    topic, group = "negotiated", "negotiated-group"
    b.clear_requests()
    produce_n(b.bootstrap, topic, 5)
    member = consume_and_commit(b.bootstrap, topic, group, 3)
    try:
        with Admin(b.bootstrap) as admin:
            offsets = admin.list_consumer_group_offsets(group)
            assert offsets == {TopicPartition(topic, 0): OffsetAndMetadata(3, "")}
            [listed] = [g for g in admin.list_consumer_groups(["stable"]) if g.group_id == group]
            assert listed.state == "Stable"
            described = admin.describe_consumer_groups([group, "nobody-here"])
            assert len(described[group].members) == 1
            assert (described["nobody-here"].state, described["nobody-here"].members) == ("Dead", ())
    finally:
        member.close()
    sent: dict[int, set[int]] = {}
    for r in b.requests():
        sent.setdefault(r["api_key"], set()).add(r["version"])
    wanted = {k: v for k, v in NEWEST.items() if k != ApiKey.HEARTBEAT}  # a heartbeat may not fall due
    by_name = ApiKey.OFFSET_FETCH  # the admin's, v9, beside the consumer's
    assert sent.pop(by_name) == {NEWEST[by_name], NEWEST[by_name] - 1}
    del wanted[by_name]
    assert {k: sent.get(k) for k in wanted} == {k: {v} for k, v in wanted.items()}
    assert sent.get(ApiKey.HEARTBEAT, {NEWEST[ApiKey.HEARTBEAT]}) == {NEWEST[ApiKey.HEARTBEAT]}


class OldApiVersionsBroker:
    """A listener that answers ApiVersions only, as a broker that knows it up to ``top``."""

    TABLE = [{"api_key": ApiKey.API_VERSIONS, "min_version": 0, "max_version": 2}]

    def __init__(self, top: int = 2) -> None:
        self.top = top
        self.versions_asked: list[int] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        try:
            conn, _ = self._listener.accept()
        except OSError:
            return
        with conn:
            while header := conn.recv(4, socket.MSG_WAITALL):
                frame = conn.recv(struct.unpack(">i", header)[0], socket.MSG_WAITALL)
                api_key, version, correlation_id = struct.unpack_from(">hhi", frame)
                assert api_key == ApiKey.API_VERSIONS
                self.versions_asked.append(version)
                if version > self.top:
                    body = {"error_code": ErrorCode.UNSUPPORTED_VERSION, "api_keys": self.TABLE}
                    conn.sendall(kproto.encode_response(ApiKey.API_VERSIONS, 0, correlation_id, body))
                else:
                    body = {"error_code": 0, "api_keys": self.TABLE, "throttle_time_ms": 0}
                    conn.sendall(kproto.encode_response(ApiKey.API_VERSIONS, version, correlation_id, body))

    def close(self) -> None:
        self._listener.close()


@pytest.fixture
def old_broker() -> Iterator[OldApiVersionsBroker]:
    broker = OldApiVersionsBroker()
    yield broker
    broker.close()


def test_an_older_broker_is_asked_again_in_a_version_it_lists(old_broker: OldApiVersionsBroker) -> None:
    table = negotiated(f"127.0.0.1:{old_broker.port}")
    assert old_broker.versions_asked == [CLIENT_VERSIONS[ApiKey.API_VERSIONS][1], 2]
    assert table == {ApiKey.API_VERSIONS: (0, 2)}


def test_an_unknown_version_is_read_in_the_v0_layout() -> None:
    refusal = {"error_code": ErrorCode.UNSUPPORTED_VERSION, "api_keys": OldApiVersionsBroker.TABLE}
    body = decode_api_versions(kproto.encode_response(ApiKey.API_VERSIONS, 0, 7, refusal), 4)
    assert body.error_code == ErrorCode.UNSUPPORTED_VERSION
    assert [(k.api_key, k.max_version) for k in body.api_keys] == [(ApiKey.API_VERSIONS, 2)]
    answer = {"error_code": 0, "api_keys": OldApiVersionsBroker.TABLE, "throttle_time_ms": 5}
    assert (
        decode_api_versions(kproto.encode_response(ApiKey.API_VERSIONS, 4, 7, answer), 4).throttle_time_ms
        == 5
    )
