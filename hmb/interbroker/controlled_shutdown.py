"""The stopping broker's ControlledShutdown request to the controller.

:func:`ask_controller` is what :func:`hmb.cluster.shutdown.controlled_shutdown`
calls (the broker wires it into its :class:`~hmb.cluster.node.ClusterNode`):
one request, its answer as the partitions the broker still leads, or a
sentence saying why there is no answer (the procedure retries).
"""

from __future__ import annotations

from hmb.cluster.layout import BrokerRegistration
from hmb.interbroker.peer import PeerError, ask
from kproto import ApiKey, ErrorCode

VERSION = 3  # ControlledShutdown version sent: the newest, as Kafka's brokers send
REQUEST_TIMEOUT_S = 30.0  # Kafka's controller.socket.timeout.ms


async def ask_controller(
    controller: BrokerRegistration, listener: str, broker_id: int
) -> list[tuple[str, int]] | str:
    """Ask ``controller`` to move ``broker_id``'s leaderships; the partitions it still leads."""
    body = {"broker_id": broker_id, "broker_epoch": -1}
    try:
        answer = await ask(controller, listener, ApiKey.CONTROLLED_SHUTDOWN, VERSION, body, REQUEST_TIMEOUT_S)
    except PeerError as exc:
        return str(exc)
    if answer.error_code != ErrorCode.NONE:
        return f"controller {controller.broker_id} answered {ErrorCode(answer.error_code).name}"
    return [(r.topic_name, r.partition_index) for r in answer.remaining_partitions]
