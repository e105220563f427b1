"""One request from this broker to another, over the Kafka protocol (inter-broker).

Rules:

* One connection per request, closed after its answer: the only user today
  is controlled shutdown, a handful of requests in a broker's life, where a
  pooled connection would be state to keep right for nothing.
* The endpoint is the other broker's registration for the listener this
  broker registered first (Kafka's inter-broker listener is one of the
  broker's own).  Only a PLAINTEXT listener is spoken to: an inter-broker
  request over TLS or SASL is not built, and :class:`PeerError` says so.
* Every failure (refused, cut, a bad answer, too slow) is one
  :class:`PeerError`: the caller tries again later or goes on without.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import trio

from hmb.cluster.layout import BrokerRegistration
from kproto import DecodeError, FrameDecoder, decode_response, encode_request

CLIENT_ID = "hmb-broker"


def by_topic(tps: Iterable[tuple[str, int]]) -> list[tuple[str, list[int]]]:
    """``(topic, partition)`` pairs as each topic's partitions, topics sorted: the shape of the
    inter-broker requests that name partitions."""
    grouped: dict[str, list[int]] = {}
    for topic, partition in tps:
        grouped.setdefault(topic, []).append(partition)
    return sorted(grouped.items())


def plain_listener(registration: BrokerRegistration) -> str:
    """The listener to speak to ``registration`` on: its first PLAINTEXT one, else its first."""
    plain = [e for e in registration.endpoints if e.security_protocol == "PLAINTEXT"]
    return (plain[0] if plain else registration.endpoints[0]).listener


class PeerError(Exception):
    """The other broker could not be asked, or did not answer in time."""


async def ask(
    registration: BrokerRegistration,
    listener: str,
    api_key: int,
    version: int,
    body: Mapping[str, Any],
    timeout_s: float,
) -> Any:
    """Send one request to the broker ``registration`` describes; its decoded response body."""
    endpoint = registration.endpoint(listener)
    if endpoint.security_protocol != "PLAINTEXT":
        protocol = endpoint.security_protocol
        raise PeerError(f"listener {endpoint.listener} is {protocol}: not spoken between brokers")
    frame = encode_request(api_key, version, 1, body, client_id=CLIENT_ID)
    decoder = FrameDecoder()
    answer: bytes | None = None
    with trio.move_on_after(timeout_s) as scope:
        try:
            stream = await trio.open_tcp_stream(endpoint.host, endpoint.port)
            async with stream:
                await stream.send_all(frame)
                while (answer := decoder.next_frame()) is None:
                    data = await stream.receive_some(65536)
                    if not data:
                        raise PeerError(f"broker {registration.broker_id} closed the connection")
                    decoder.feed(data)
        except (OSError, trio.BrokenResourceError) as exc:
            where = f"{endpoint.host}:{endpoint.port}"
            raise PeerError(f"broker {registration.broker_id} at {where}: {exc}") from None
    if scope.cancelled_caught or answer is None:
        raise PeerError(f"broker {registration.broker_id} did not answer within {timeout_s:g} s")
    try:
        return decode_response(api_key, version, answer).body
    except DecodeError as exc:
        raise PeerError(f"broker {registration.broker_id} answered garbage: {exc}") from None
