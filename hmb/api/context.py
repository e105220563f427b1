"""What a handler gets besides the request: the broker's services and the connection's session.

Handlers are thin (kfake style): they translate between the request's
fields and calls on the services (the log, the group coordinator, the
committed offsets, the transaction coordinator, the authoriser;
later metrics), and turn exceptions into Kafka error codes.  They never see the
broker object itself, so a handler can be driven in-process over any set of
services (the tests do), and the broker, the network layer and the API
layer import each other in one direction only.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import trio

from hmb.clock import Clock
from hmb.security.principal import ANONYMOUS, KafkaPrincipal
from kproto import Request

if TYPE_CHECKING:
    from hmb.api.fetch_sessions import FetchSessionCache
    from hmb.cluster.node import ClusterNode
    from hmb.config import BrokerConfig, Listener
    from hmb.groups.coordinator import GroupCoordinator
    from hmb.groups.offset_partitions import GroupOffsets
    from hmb.log.manager import LogManager
    from hmb.log.region import FileRegion
    from hmb.security.authorizer import Authorizer
    from hmb.security.credentials import CredentialStore
    from hmb.security.plain import PlainUsers
    from hmb.settings import Settings
    from hmb.txn.coordinator import TransactionCoordinator


class CloseConnection(Exception):  # noqa: N818 - an instruction to the network layer, not a failure
    """End this connection; the message is the logged reason.

    Raised by the dispatcher for unusable bytes and by handlers where Kafka
    closes the socket (a failed produce with acks=0, so the producer
    notices).
    """


@dataclass
class Services:
    """The broker's parts a handler may use, one object per broker (``settings``: the
    configuration as DescribeConfigs/AlterConfigs see it).

    ``offsets`` and ``transactions`` exist once the log is loaded (the
    committed offsets and the transactions' state live in partitions of
    it); ``advertised`` answers the address clients are told, known only
    once the listener is bound.
    """

    config: BrokerConfig
    logs: LogManager
    groups: GroupCoordinator
    advertised: Callable[..., Listener]  # (listener name=None) -> the address clients are told
    settings: Settings
    _offsets: GroupOffsets | None = None
    _transactions: TransactionCoordinator | None = None
    clock: Clock = field(default_factory=Clock)  # the broker's time (hmb.clock): fetch waits on it
    #: None: no authoriser configured, everything is allowed (authorizer.class.name empty)
    authorizer: Authorizer | None = None
    #: the SCRAM credentials; None until the broker loads them
    credentials: CredentialStore | None = None
    #: listener name -> its PLAIN users (listener.name.<listener>.plain.sasl.jaas.config)
    plain_users: dict[str, PlainUsers] = field(default_factory=dict)
    #: this broker's membership of a cluster; None: alone (no zookeeper.connect)
    cluster: ClusterNode | None = None
    #: rAck's receipt writer (hmb.api.rack), made at the first Produce with acks = -2
    rack_receipts: Any = None
    #: the incremental fetch sessions (KIP-227); made by the first fetch that opens one
    fetch_sessions: FetchSessionCache | None = None

    @property
    def offsets(self) -> GroupOffsets:
        assert self._offsets is not None, "the committed offsets are not loaded yet"
        return self._offsets

    @offsets.setter
    def offsets(self, store: GroupOffsets) -> None:
        self._offsets = store

    @property
    def transactions(self) -> TransactionCoordinator:
        """The transaction coordinator (loaded with the log, after the committed offsets)."""
        assert self._transactions is not None, "the transaction coordinator is not loaded yet"
        return self._transactions

    @transactions.setter
    def transactions(self, coordinator: TransactionCoordinator) -> None:
        self._transactions = coordinator


@dataclass
class Session:
    """What the broker knows about one connection, shared by all its requests.

    The network layer fills in where the connection came from (its listener
    and security protocol, a TLS client certificate's principal); the SASL
    handlers fill in who authenticated and until when.
    """

    peer: str = "?"
    #: set when the client has closed its side: long waits end early
    client_gone: trio.Event = field(default_factory=trio.Event)
    listener: str = "PLAINTEXT"
    security_protocol: str = "PLAINTEXT"
    principal: KafkaPrincipal = ANONYMOUS
    #: False on a SASL listener until SaslAuthenticate succeeds (the dispatcher's gate)
    authenticated: bool = True
    #: the SASL exchange in progress: the mechanism chosen by SaslHandshake, then its server state
    sasl: Any = None
    #: the mechanism the connection authenticated with (re-authentication must use it again)
    sasl_mechanism: str | None = None
    #: trio time after which the authentication has expired (connections.max.reauth.ms); None: never
    reauth_deadline: float | None = None
    #: set by a handler whose answer must be the connection's last (failed authentication): the reason
    close_after_reply: str | None = None
    #: set by the network layer: called when a handler waits on the client, so that someone
    #: reads the connection meanwhile and sets ``client_gone`` when the client leaves
    watch_client: Callable[[], None] | None = field(default=None, repr=False, compare=False)

    @property
    def host(self) -> str:
        """The peer's address without the port: what ACLs match hosts against."""
        host, _, _ = self.peer.rpartition(":")
        return host.strip("[]") or self.peer


@dataclass
class RequestContext:
    """What a handler gets: the decoded request, its connection's session and the broker's services."""

    services: Services
    request: Request
    session: Session = field(default_factory=Session)

    # The services and session fields handlers use, by their short names.
    @property
    def config(self) -> BrokerConfig:
        return self.services.config

    @property
    def logs(self) -> LogManager:
        return self.services.logs

    @property
    def groups(self) -> GroupCoordinator:
        return self.services.groups

    @property
    def offsets(self) -> GroupOffsets:
        return self.services.offsets

    @property
    def settings(self) -> Settings:
        return self.services.settings

    @property
    def peer(self) -> str:
        return self.session.peer

    @property
    def client_gone(self) -> trio.Event:
        """Set when the client leaves; asking for it makes the connection watch for that."""
        if self.session.watch_client is not None:
            self.session.watch_client()
        return self.session.client_gone


class NoResponse:
    """The request is answered with silence (Produce with acks=0)."""


NO_RESPONSE = NoResponse()


@dataclass
class RawResponse:
    """A response assembled in pieces: bytes and file regions, size prefix included.

    ``resources`` is closed once the pieces are on the wire (it unpins the
    segments the regions point into).
    """

    parts: list[bytes | FileRegion]
    resources: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)

    @property
    def size(self) -> int:
        return sum(len(p) if isinstance(p, bytes) else p.length for p in self.parts)


Reply = dict[str, Any] | NoResponse | RawResponse | bytes
"""A handler's answer: a body for ``kproto.encode_response``, silence, a response in
pieces, or ``bytes``: a whole response frame (size prefix included) a handler encoded
itself (Produce's struct fast path)."""
