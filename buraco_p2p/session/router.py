"""A deterministic in-memory table: peers in one process, entries delivered in FIFO order.

For tests, self-play and anything else that wants whole matches without a network. Every
entry a peer sends is queued for every other peer; `YourTurn` is answered by the `choose`
callback with the peer's own view (a bot sees only that); nothing reads a clock (the time
handed to the peers is a counter of deliveries, so timeouts can be driven by `advance`).
A router can also relay what each peer first hears (`relay=True`), as a gossiping transport
would, which is what lets honest peers catch an author that equivocates.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable, Sequence

from buraco_p2p.engine import HandState, Move
from buraco_p2p.session.entry import Entry
from buraco_p2p.session.events import Event, YourTurn
from buraco_p2p.session.peer import Output, Peer

__all__ = ["Chooser", "Router"]

Chooser = Callable[[int, HandState], Move]


class Router:
    """Delivers entries among `peers` (index = party). `tamper(sender, receiver, data)` lets a
    test lose or change a delivery (it returns the bytes to deliver, or None); parties in
    `silent` neither receive nor send; `YourTurn` of parties in `manual` is only recorded in
    `turns`, for the caller to answer; with `shuffle`, each delivery is picked at random from
    the queue (a network that reorders everything), else the queue is FIFO."""

    def __init__(
        self,
        peers: Sequence[Peer],
        choose: Chooser,
        *,
        relay: bool = False,
        tamper: Callable[[int, int, bytes], bytes | None] | None = None,
        shuffle: random.Random | None = None,
    ) -> None:
        self.peers = list(peers)
        self.choose = choose
        self.relay = relay
        self.tamper = tamper
        self.shuffle = shuffle
        self.now = 0.0
        self.queue: deque[tuple[int, int, bytes]] = deque()
        self.events: list[list[Event]] = [[] for _ in peers]
        self.persisted: list[list[Entry]] = [[] for _ in peers]
        self.silent: set[int] = set()
        self.manual: set[int] = set()
        self.turns: list[int] = []
        self.deliveries = 0

    def _handle(self, party: int, out: Output) -> None:
        if out.rollback is not None:  # the saved log is cut back first
            self.persisted[party] = [e for e in self.persisted[party] if e.index < out.rollback]
        self.persisted[party] += out.persist
        self.events[party] += out.events
        if party in self.silent:
            return
        outgoing = out.send + (out.relay if self.relay else [])
        for data in outgoing:
            for other in range(len(self.peers)):
                if other != party:
                    self.queue.append((party, other, data))
        for ev in out.events:
            if isinstance(ev, YourTurn) and party in self.manual:
                self.turns.append(party)
            elif isinstance(ev, YourTurn):
                view = self.peers[party].table.view
                assert view is not None
                move = self.choose(party, view)
                self._handle(party, self.peers[party].play(move, self.now))

    def start(self) -> None:
        for party, peer in enumerate(self.peers):
            if party not in self.silent:
                self._handle(party, peer.start(self.now))

    def run(self, max_deliveries: int = 1_000_000) -> int:
        """Deliver until the queue is empty (or the bound); returns deliveries made."""
        done = 0
        while self.queue and done < max_deliveries:
            if self.shuffle is not None:
                self.queue.rotate(-self.shuffle.randrange(len(self.queue)))
            sender, receiver, data = self.queue.popleft()
            done += 1
            self.deliveries += 1
            self.now += 0.001
            if receiver in self.silent:
                continue
            if self.tamper is not None:
                changed = self.tamper(sender, receiver, data)
                if changed is None:
                    continue
                data = changed
            self._handle(receiver, self.peers[receiver].receive(data, self.now))
        return done

    def inject(self, sender: int, data: bytes, to: Sequence[int] | None = None) -> None:
        """Queue raw bytes as if `sender` had sent them (to everyone but itself by default)."""
        for other in to if to is not None else range(len(self.peers)):
            if other != sender:
                self.queue.append((sender, other, data))

    def advance(self, seconds: float) -> None:
        """Move the clock on and let every peer tick."""
        self.now += seconds
        for party, peer in enumerate(self.peers):
            if party not in self.silent:
                self._handle(party, peer.tick(self.now))

    def act(self, party: int, out: Output) -> None:
        """Route the output of a call the test made on a peer directly."""
        self._handle(party, out)
