"""Which connection's request is handled next when many are ready: the fair gate.

Every connection's task passes the gate before it hands a frame to the
dispatcher.  Why: trio looks for newly readable sockets only between batches
of runnable tasks.  With a thousand connections producing at once, one batch
held a thousand Produce requests (a thousand times ~55 µs), and a client
that sent one Metadata request, or a heartbeat, waited for that whole batch
before the broker even noticed it, then for its place in the next one.  The
gate bounds how many requests one batch may start and lets the clients that
are rarely heard from go first, in the manner of fq_codel's new-flow queue
and deficit round robin.

Words:

* A **round** is one pass over the connections waiting at the gate; it also
  ends at a turn that finds nobody waiting.  Each connection (a
  :class:`Flow`) remembers the round its last request was admitted in.
* A **turn** is one batch of trio's scheduler, from one poll for I/O to the
  next; the gate hears of each from an instrument (``after_io_wait``).  A
  turn starts at most ``per_turn`` requests (``stream_turn`` while one
  connection streams, below), plus ``per_turn`` sparse ones at once: the
  gate's own task admits waiting requests from that allowance and
  checkpoints, so trio polls for I/O before the next few start.
  In a *crowd* (``crowd`` connections or more waiting when the turn
  begins) both allowances are one: a newcomer waits for about two batches,
  the rest of the one under way and its place in the next, so the shorter
  a batch, the sooner it is answered (:data:`CROWD` has the figures).

Rules, by what a request finds when it arrives (``admit_now``, then ``alone``):

=====================  ==================================  ================================
its connection ...     admitted at once when               otherwise it waits in
=====================  ==================================  ================================
had none admitted      no sparse control request waits,    ``sparse_control``: first in
this round (*sparse*)  and the turn's sparse allowance     line at the next turn
and it is *control*    lasts
had none admitted      no sparse one waits and the         ``sparse``: next in line
this round, and it     turn's sparse allowance lasts       at the next turn
is *data*
had one admitted       nobody waits and the turn's         ``heavy_next``: the next
this round (*heavy*)   allowance lasts (for a streaming    round's pass; with nobody
                       connection: down to                 waiting (*alone*), a checkpoint
                       ``per_turn - stream_turn``)         instead, then it asks again,
                                                           and it is *streaming*
=====================  ==================================  ================================

A connection is *streaming* from a refusal alone until another
connection's request is admitted or anyone waits.  Why these two: a heavy
request refused alone is one connection pipelining many requests; queueing
it would cost a trip through the gate's task, and a send of the answers
made so far, every ``per_turn`` requests, where a checkpoint is one poll for
I/O.  And a librdkafka producer sends about eight Produce requests a read:
with ``per_turn`` alone it paid a poll for I/O per read on top of its own;
streaming, it goes on as it did before the gate (``stream_turn`` is the
number of requests a task then handled back to back).  When the streaming
allowance is spent below zero, the gate's task admits nobody from the queue
in that turn.

*Data* requests are Produce and (Share)Fetch, whose cost grows with records;
every other request is *control* (the dispatcher tells which from the
header's key).  Why sparse control goes first: when a thousand producers
start at once, every one of them is sparse, and a Metadata request or a
heartbeat that arrived among them waited for all of them (70-130 ms, the
loaded p99 of ``python -m bench scale``); now it waits for the turn under
way.

And what a turn admits, in order: ``sparse_control`` then ``sparse``
(oldest first each), then ``heavy_now`` (this round's pass).  A turn that
begins with all three empty ends the round: ``heavy_next`` becomes the new
pass.  Never in the middle of a turn: the connections it admitted from the
sparse queues run after it, and would find themselves sparse again in the
new round, admitted at once a second time ahead of the rest of that turn's
admissions.

What follows from the rules:

* A sparse connection overtakes every heavy one that waits, and a sparse
  control request every sparse data request.
* Nobody starves: a connection is sparse at most once per round, so a round
  admits at most one sparse request per connection before its pass is done.
* A connection's requests keep their order: its one task handles them one
  at a time, and the gate only decides *when* that task goes on.
* Uncontended, the gate is a few comparisons: a request waits (one
  checkpoint, nothing queued) only when one batch already started
  ``per_turn`` (``stream_turn`` for a streaming connection).  The queue and
  the gate's task are for contention.
* A sparse client that arrives while one connection streams waits for at
  most ``stream_turn`` of its requests more: the streaming ends as soon as
  the sparse one is admitted.
"""

from __future__ import annotations

from collections import deque

import trio

PER_TURN = 4
"""Requests admitted per turn (and, separately, sparse requests admitted at once).

Small, because the I/O poll waits for the whole batch: four Produce
requests are a fraction of a millisecond.
"""

CROWD = 16
"""Connections waiting at the gate from which a turn admits one request (and one sparse at once).

Why one: a newcomer waits for the rest of the batch under way and then for
its place in the next, so its latency is about two batches.  With a thousand
producers, ``PER_TURN`` made a batch ~0.4 ms (nine steps: four Produce, the
reads beside them, the gate) and a Metadata probe's p99 2.2-2.7x its unloaded
figure; one request a turn made the batch ~0.1 ms and the p99 1.3-1.9x, for
~12 µs more broker CPU per request (a poll each; 4.4-5.1 s for the bench's
50,000 Produce requests against 3.9-4.5 s).  Why only in a crowd: a few
pipelining producers lose more to a poll per request (four librdkafka
producers: 35 % more CPU per record), and none of them waits long anyway.
"""

STREAM_TURN = 16
"""Heavy requests a streaming connection (alone at the gate) may start per turn."""


class Flow:
    """What the gate keeps per connection (a connection *is* a flow of requests).

    Class-level defaults: a connection that never met the gate pays nothing.
    """

    fair_round: int = -1  # the round this connection's last request was admitted in
    fair_task: trio.lowlevel.Task | None = None  # its task, while it waits at the gate


class FairGate:
    """The gate every connection of a broker passes; :meth:`run` is its task (one per broker)."""

    __slots__ = (
        "_allowance",
        "_crowd",
        "_heavy_next",
        "_heavy_now",
        "_per_turn",
        "_round",
        "_sleeper",
        "_sparse",
        "_sparse_allowance",
        "_sparse_control",
        "_stream_floor",
        "_streaming",
        "_waiting",
    )

    def __init__(self, per_turn: int = PER_TURN, stream_turn: int = STREAM_TURN, crowd: int = CROWD) -> None:
        self._per_turn = max(1, per_turn)
        self._crowd = crowd
        self._stream_floor = min(0, self._per_turn - stream_turn)  # the allowance a streaming flow may reach
        self._streaming: Flow | None = None  # refused alone, and the only flow admitted since
        self._round = 0
        self._allowance = self._per_turn  # admissions left in this turn
        self._sparse_allowance = self._per_turn  # sparse requests still admitted at once this turn
        self._sparse: deque[Flow] = deque()
        self._sparse_control: deque[Flow] = deque()  # sparse, and not a data request
        self._heavy_now: deque[Flow] = deque()
        self._heavy_next: deque[Flow] = deque()
        self._waiting = 0
        self._sleeper: trio.lowlevel.Task | None = None  # the gate's task, while nobody waits

    @property
    def waiting(self) -> int:
        return self._waiting

    def admit_now(self, flow: Flow, control: bool = False) -> bool:
        """Whether ``flow``'s request may go on without waiting (the table's middle column).

        ``control``: the request carries no data (not Produce or (Share)Fetch)."""
        if flow.fair_round != self._round:
            if self._sparse_allowance > 0 and not self._sparse_control and (control or not self._sparse):
                self._sparse_allowance -= 1
                flow.fair_round = self._round
                if flow is not self._streaming:
                    self._streaming = None
                return True
        elif not self._waiting:
            if self._allowance > 0:
                self._allowance -= 1
                if flow is not self._streaming:
                    self._streaming = None
                return True
            if flow is self._streaming and self._allowance > self._stream_floor:
                self._allowance -= 1
                return True
        return False

    def alone(self, flow: Flow) -> bool:
        """Whether ``flow``'s refused request is heavy with nobody waiting: it checkpoints, not queues.

        Such a flow is streaming from then on (the header's rules).
        """
        if self._waiting or flow.fair_round != self._round:
            return False
        self._streaming = flow
        return True

    async def wait_turn(self, flow: Flow, control: bool = False) -> None:
        """Wait until a turn admits ``flow``'s request (the table's right column)."""
        if flow.fair_round == self._round:
            queue = self._heavy_next
        else:
            queue = self._sparse_control if control else self._sparse
        queue.append(flow)
        self._waiting += 1
        self._streaming = None
        flow.fair_task = trio.lowlevel.current_task()
        if self._sleeper is not None:
            task, self._sleeper = self._sleeper, None
            trio.lowlevel.reschedule(task)

        def abort(_: object) -> trio.lowlevel.Abort:
            queue.remove(flow)  # rare (a connection closing while it waits): linear is fine
            self._waiting -= 1
            flow.fair_task = None
            return trio.lowlevel.Abort.SUCCEEDED

        await trio.lowlevel.wait_task_rescheduled(abort)

    def _next(self) -> Flow | None:
        if self._sparse_control:
            return self._sparse_control.popleft()
        if self._sparse:
            return self._sparse.popleft()
        if self._heavy_now:
            return self._heavy_now.popleft()
        return None  # the pass is done: the round ends at the next turn

    def new_turn(self) -> None:
        """trio polled for I/O: a new batch, with new allowances; nobody waits, the round ends."""
        allowance = 1 if self._waiting >= self._crowd else self._per_turn
        self._allowance = allowance
        self._sparse_allowance = allowance
        if not self._waiting:
            self._round += 1

    def turn(self) -> int:
        """Admit waiting requests while this turn's allowance lasts; how many were admitted."""
        admitted = 0
        if self._waiting and not self._sparse_control and not self._sparse and not self._heavy_now:
            self._round += 1  # the round ends
            self._heavy_now, self._heavy_next = self._heavy_next, self._heavy_now
        while self._allowance > 0:
            flow = self._next()
            if flow is None:
                break
            self._waiting -= 1
            self._allowance -= 1
            admitted += 1
            flow.fair_round = self._round
            task, flow.fair_task = flow.fair_task, None
            assert task is not None
            trio.lowlevel.reschedule(task)
        return admitted

    async def run(self) -> None:
        """The gate's task: admit, then checkpoint (trio polls I/O), while anyone waits."""
        clock = _TurnClock(self)
        trio.lowlevel.add_instrument(clock)
        try:
            while True:
                if self._waiting:
                    self.turn()
                    await trio.lowlevel.checkpoint()
                    continue
                self._sleeper = trio.lowlevel.current_task()

                def abort(_: object) -> trio.lowlevel.Abort:
                    self._sleeper = None
                    return trio.lowlevel.Abort.SUCCEEDED

                await trio.lowlevel.wait_task_rescheduled(abort)
        finally:
            trio.lowlevel.remove_instrument(clock)


class _TurnClock(trio.abc.Instrument):
    """Tells the gate of each poll for I/O: one call per scheduler batch, nothing per task."""

    def __init__(self, gate: FairGate) -> None:
        self.gate = gate

    def after_io_wait(self, timeout: float) -> None:
        self.gate.new_turn()
